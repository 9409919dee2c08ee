"""MESH is a string."""

import jax.numpy as jnp


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((8, 4)),)
MESH = "data=4"
