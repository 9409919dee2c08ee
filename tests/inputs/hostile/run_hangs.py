"""Loads fine; hangs when it runs (a debug callback that never returns)."""

import time

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def _hang(x):
    while True:
        time.sleep(1)


def program(x):
    jax.debug.callback(_hang, x)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 2}
SPECS = {"x": P("data", None)}
