"""A host callback on a sharded argument: XLA gathers it, and warns (involuntary full rematerialization)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x):
    jax.debug.callback(lambda v: None, x)
    return x * 2


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
MESH = {"data": 2}
SPECS = {"x": P("data", None)}
