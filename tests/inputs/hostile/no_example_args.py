"""A program with no EXAMPLE_ARGS."""

import jax.numpy as jnp


def f(x):
    return jnp.tanh(x)


PROGRAM = f
