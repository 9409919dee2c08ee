"""shard_map over the data axis inside a jitted program."""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def shmap(x, w):
    @partial(
        jax.shard_map,
        in_specs=(P("data", None), P()),
        out_specs=P("data", None),
        axis_names={"data"},
    )
    def local(a, b):
        return jnp.tanh(a @ b)

    return local(x, w) * 2.0


PROGRAM = shmap
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((32, 32), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"w": P(None, "model")}
