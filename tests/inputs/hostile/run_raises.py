"""Loads fine; raises when it runs (a debug callback that fails)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def _fail(x):
    raise ValueError("the program's own failure at run time")


def program(x):
    jax.debug.callback(_fail, x)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 2}
SPECS = {"x": P("data", None)}
