"""A program that is a ``jax.jit`` object of the user's, around a module-level
``@jax.shard_map`` without mesh=: per-device softmax statistics summed with ``psum``."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.shard_map(in_specs=P("data", None), out_specs=P("data", None))
def normalized(x):
    e = jnp.exp(x - jax.lax.pmax(jnp.max(x), "data"))
    return e / jax.lax.psum(jnp.sum(e), "data")


@jax.jit
def program(x, w):
    return normalized(x @ w)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((16, 4), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P("data", None), "w": P()}
