"""SPECS gives more entries than the tensor has dimensions."""

import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((8, 4)),)
MESH = {"data": 4, "model": 2}
SPECS = {"x": P("data", "model", None)}
