"""EXAMPLE_ARGS has the wrong number of arguments."""

import jax.numpy as jnp


def f(x, y):
    return x @ y


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 4)),)
