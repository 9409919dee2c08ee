"""An embedding lookup from a table sharded over its vocabulary."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def embed(table, ids):
    vectors = jnp.take(table, ids, axis=0)
    return jnp.sum(vectors)


PROGRAM = embed
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((128, 32), jnp.float32),
    jax.ShapeDtypeStruct((8, 16), jnp.int32),
)
MESH = {"data": 2, "model": 4}
SPECS = {"table": P("model", None), "ids": P("data", None)}
