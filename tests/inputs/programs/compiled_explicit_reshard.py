"""Explicit axes: a matmul whose operand the user moves with jax.sharding.reshard."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 2), ("data", "model"))


def program(x, w):
    x = jax.sharding.reshard(x, P("data", None))
    return jnp.tanh(x @ w)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=NamedSharding(mesh, P("data", "model"))),
    jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P(None, "model"))),
)
MESH = mesh
