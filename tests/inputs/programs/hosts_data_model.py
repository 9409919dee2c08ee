"""Two psums on a data=2, model=4 mesh: one over model, then one over data, written by
the user in shard_map, so the compiled program has an all-reduce over each axis."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def local(x):
    rows = jax.lax.psum(jnp.tanh(x), "model")
    return jax.lax.psum(rows * 2.0, "data")


def program(x):
    return jax.shard_map(local, mesh=mesh, in_specs=P("data", "model"), out_specs=P())(x)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(mesh, P("data", "model"))),
)
MESH = mesh
