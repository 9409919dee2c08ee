"""Explicit axes set for the whole program at import (jax.set_mesh(mesh), no MESH): the
program moves its argument onto the mesh with jax.sharding.reshard."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

jax.set_mesh(jax.make_mesh((8,), ("data",)))


def program(x, w):
    x = jax.sharding.reshard(x, P("data", None))
    return jnp.tanh(x @ w), (x * 2).sum(axis=0)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
)
