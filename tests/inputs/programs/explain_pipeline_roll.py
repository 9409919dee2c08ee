"""A pipeline step: stages sharded over ``stage``, the state rotated by ``jnp.roll`` after
each tick and the last stage's output taken out with ``out[-1]``."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def pipeline(state, weights, microbatch):
    def tick(carry, _):
        out = jnp.tanh(jnp.einsum("sbd,sde->sbe", carry, weights))
        rotated = jnp.roll(out, 1, axis=0)
        rotated = rotated.at[0].set(microbatch)
        return rotated, out[-1]

    state, outputs = jax.lax.scan(tick, state, None, length=4)
    return state, outputs.sum()


PROGRAM = pipeline
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((4, 8, 16), jnp.float32),
    jax.ShapeDtypeStruct((4, 16, 16), jnp.float32),
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
)
MESH = {"stage": 4, "data": 2}
SPECS = {
    "state": P("stage", "data", None),
    "weights": P("stage", None, None),
    "microbatch": P("data", None),
}
