"""Prints to stdout while being imported and traced; loads fine."""

import sys

import jax.numpy as jnp

print("{not json")
print("noise on stderr", file=sys.stderr)


def f(x):
    print("tracing", x.shape)
    return jnp.sin(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((8, 4)),)
