"""A program that returns something that is not an array."""

import jax.numpy as jnp


def f(x):
    return "hello"


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4,)),)
