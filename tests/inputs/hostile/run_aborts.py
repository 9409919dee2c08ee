"""Loads fine; aborts the process when it runs (a debug callback calls os.abort)."""

import os

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def _abort(x):
    os.abort()


def program(x):
    jax.debug.callback(_abort, x)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 2}
SPECS = {"x": P("data", None)}
