"""Traces on host 0; host 1 sleeps for an hour as it traces (it keeps its heartbeats)."""

import time

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x):
    if jax.process_index() == 1:
        time.sleep(3600)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 8}
SPECS = {"x": P("data", None)}
