"""Defines no PROGRAM."""

import jax.numpy as jnp


def f(x):
    return x


EXAMPLE_ARGS = (jnp.zeros((4,)),)
