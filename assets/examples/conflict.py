"""Two operands of one add arrive sharded on different mesh axes for the same dimension."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def conflict(x, y):
    return jnp.sin(x) + y


PROGRAM = conflict
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"x": P("data", None), "y": P("model", None)}
