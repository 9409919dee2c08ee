"""Loads fine; a host callback raises when it runs, on one device of two, before an
all-reduce that the other device then waits at."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def _fail(x):
    raise RuntimeError("the callback's own failure")


def program(x):
    y = jax.pure_callback(_fail, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return (y * 2).sum()


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 2}
SPECS = {"x": P("data", None)}
