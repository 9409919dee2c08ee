"""Data parallel with shard_map: each device's gradient, psum-ed over the data axis by
the user's own code."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",))


def loss(w, x):
    return jnp.tanh(x @ w).sum()


def local_grad(w, x):
    return jax.lax.psum(jax.grad(loss)(w, x), "data")


def program(w, x):
    g = jax.shard_map(local_grad, mesh=mesh, in_specs=(P(), P("data")), out_specs=P())(w, x)
    return w - 0.1 * g


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(mesh, P())),
    jax.ShapeDtypeStruct((32, 8), jnp.float32, sharding=NamedSharding(mesh, P("data"))),
)
MESH = mesh
