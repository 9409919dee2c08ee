"""An argument used only for its shape, with a spec in SPECS: jax.jit leaves it out of
the lowered module, so its spec has nothing to shard."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x, n):
    return jnp.zeros(n.shape) + x


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8,), jnp.float32),
    jax.ShapeDtypeStruct((8,), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P("data"), "n": P("data")}
