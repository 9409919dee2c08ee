"""Traces on host 0; host 1 kills itself with SIGKILL as it traces."""

import os
import signal

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x):
    if jax.process_index() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 8}
SPECS = {"x": P("data", None)}
