"""Raises an error whose message spans lines (as Equinox's do)."""

import jax.numpy as jnp


def f(x):
    raise TypeError("bad argument\n  in call to f\n  argument x: wrong kind")


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 4)),)
