"""SPECS is a list, not a mapping."""

import jax.numpy as jnp


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((8, 4)),)
SPECS = ["x"]
