"""A program whose MESH has 10^12 devices."""

import jax
import jax.numpy as jnp

PROGRAM = lambda x: x * 2  # noqa: E731
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 8), jnp.float32),)
MESH = {"a": 10**6, "b": 10**6}
