"""A program that recurses without end."""

import jax.numpy as jnp


def f(x):
    return f(x + 1)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4,)),)
