"""Python control flow on a traced value."""

import jax.numpy as jnp


def f(x):
    if x.sum() > 0:
        return x
    return -x


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4,)),)
