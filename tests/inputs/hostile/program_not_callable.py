"""PROGRAM is not a function."""

import jax.numpy as jnp

PROGRAM = 3
EXAMPLE_ARGS = (jnp.zeros((4,)),)
