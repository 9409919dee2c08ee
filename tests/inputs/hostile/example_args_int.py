"""EXAMPLE_ARGS is a number, not a tuple."""

import jax.numpy as jnp


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = 5
