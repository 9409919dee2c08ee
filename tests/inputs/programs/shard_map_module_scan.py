"""A module-level ``@jax.shard_map`` (no mesh=) as the body of a ``jax.lax.scan``: each
step a matmul sharded over its rows, then the step's state normalized by a ``pmax``."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.shard_map(in_specs=(P("data", None), P()), out_specs=P("data", None))
def step_local(h, w):
    h = jnp.tanh(h @ w)
    return h / (jax.lax.pmax(jnp.max(jnp.abs(h)), "data") + 1.0)


def program(h, ws):
    def step(carry, w):
        out = step_local(carry, w)
        return out, jnp.sum(out)

    return jax.lax.scan(step, h, ws)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((3, 16, 16), jnp.float32),
)
MESH = {"data": 2}
SPECS = {"h": P("data", None), "ws": P()}
