"""SPECS names a tensor the program does not have."""

import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((8, 4)),)
MESH = {"data": 4, "model": 2}
SPECS = {"not_a_tensor": P("data", None)}
