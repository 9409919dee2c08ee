"""Traces on host 0; raises on host 1 (``jax.process_index()`` is 1 there)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x):
    if jax.process_index() == 1:
        raise ValueError("host 1 refuses to trace")
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 8}
SPECS = {"x": P("data", None)}
