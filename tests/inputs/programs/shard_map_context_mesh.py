"""shard_map on the context mesh (no mesh= of its own): a partial sum over data, so its
all-reduce groups the devices that lie along data, in whatever order the mesh has them."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def local(w, x):
    return jax.lax.psum(jnp.tanh(x @ w), "data")


def program(w, x):
    return jax.shard_map(local, in_specs=(P(None, "model"), P("data")), out_specs=P(None, "model"))(
        w, x
    )


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((32, 8), jnp.float32),
)
MESH = {"data": 2, "model": 2}
SPECS = {"w": P(None, "model"), "x": P("data", None)}
