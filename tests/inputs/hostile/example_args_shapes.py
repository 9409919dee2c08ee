"""EXAMPLE_ARGS whose shapes do not fit the program."""

import jax.numpy as jnp


def f(x, y):
    return x @ y


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 3)), jnp.zeros((5, 2)))
