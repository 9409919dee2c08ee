"""Typed PRNG key arrays as arguments and results: one key given, a row of keys sharded
over the mesh (a ShapeDtypeStruct, so seeded), and split keys returned."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(key, keys, x):
    noise = jax.vmap(lambda k: jax.random.normal(k, (4,)))(keys)
    return x + noise + jax.random.normal(key, x.shape), jax.random.split(key, 4), keys


PROGRAM = program
EXAMPLE_ARGS = (
    jax.random.key(7),
    jax.ShapeDtypeStruct((8,), jax.random.key(0).dtype),
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"keys": P("data"), "x": P("data", None)}
