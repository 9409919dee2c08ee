"""One jitted function called from several places (and from inside another one), on
differently sharded tensors: each call's results must keep their own shardings."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.jit
def scale(v):
    return jnp.tanh(v) * 2.0


@jax.jit
def twice(v):
    return scale(v) + scale(v.T).T


def two_calls(a, b):
    return scale(a) + 1.0, twice(b) - 1.0


PROGRAM = two_calls
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((32, 32), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"a": P("data", None), "b": P(None, "model")}
