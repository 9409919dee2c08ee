"""Dropout from a PRNG key argument: a typed key (jax.random.key) and a raw uint32 key
(jax.random.PRNGKey), each drawing jax.random.bernoulli masks."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(key, raw, x):
    keep = jax.random.bernoulli(key, 0.5, x.shape)
    other = jax.random.bernoulli(raw, 0.25, x.shape)
    return jnp.where(keep, x / 0.5, 0.0), jnp.where(other, x, -x)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.random.key(3),
    jax.random.PRNGKey(5),
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P("data", None)}
