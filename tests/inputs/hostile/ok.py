"""A well-behaved program, for the command-line cases."""

import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def f(x, w):
    return jnp.tanh(x @ w)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((16, 32)), jnp.zeros((32, 8)))
MESH = {"data": 4, "model": 2}
SPECS = {"x": P("data", None)}
