"""A module-level ``@jax.shard_map`` (no mesh=: it takes the mesh in context) called
inside the program and differentiated with ``jax.grad``: a row-parallel matmul whose
partial products are summed with ``psum``."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.shard_map(in_specs=(P(None, "model"), P("model", None)), out_specs=P())
def row_parallel(x, w):
    return jax.lax.psum(x @ w, "model")


def loss(w, x):
    return jnp.sum(jnp.tanh(row_parallel(x, w)) ** 2)


def program(w, x):
    return jax.grad(loss)(w, x)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
    jax.ShapeDtypeStruct((4, 16), jnp.float32),
)
MESH = {"model": 4}
SPECS = {"w": P("model", None), "x": P(None, "model")}
