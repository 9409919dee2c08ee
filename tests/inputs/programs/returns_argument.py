"""A program that returns an argument as it is and one product twice: the lowered
module returns the argument's own value, and the same value at two results."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x, y):
    product = x @ y
    return x, product, product


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
    jax.ShapeDtypeStruct((4, 4), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P("data", None)}
