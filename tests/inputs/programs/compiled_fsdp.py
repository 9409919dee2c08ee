"""FSDP with shard_map: the weight is gathered before use (all_gather) and its
gradient reduce-scattered back (psum_scatter), both written by the user."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",))


def local_step(w, x):
    full = jax.lax.all_gather(w, "data", tiled=True)
    g = jax.grad(lambda v: jnp.tanh(x @ v).sum())(full)
    return w - 0.1 * jax.lax.psum_scatter(g, "data", tiled=True)


def program(w, x):
    spec = (P("data"), P("data"))
    return jax.shard_map(local_step, mesh=mesh, in_specs=spec, out_specs=P("data"))(w, x)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(mesh, P("data"))),
    jax.ShapeDtypeStruct((32, 8), jnp.float32, sharding=NamedSharding(mesh, P("data"))),
)
MESH = mesh
