"""Megatron-style tensor parallel MLP with shard_map: column- then row-parallel
matmuls, the partial sums psum-ed over the model axis by the user."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 2), ("data", "model"))


def local_mlp(x, w1, w2):
    return jax.lax.psum(jnp.tanh(x @ w1) @ w2, "model")


def program(x, w1, w2):
    specs = (P("data", None), P(None, "model"), P("model", None))
    return jax.shard_map(local_mlp, mesh=mesh, in_specs=specs, out_specs=P("data", None))(x, w1, w2)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(mesh, P("data", None))),
    jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P(None, "model"))),
    jax.ShapeDtypeStruct((32, 16), jnp.float32, sharding=NamedSharding(mesh, P("model", None))),
)
MESH = mesh
