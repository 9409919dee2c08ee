"""A program whose own sharding is on a mesh of its own (dp, tp) and that sets no MESH."""

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

MESH_DPTP = AbstractMesh((2, 2), ("dp", "tp"), axis_types=(AxisType.Auto,) * 2)


def f(x, w):
    h = jax.lax.with_sharding_constraint(x @ w, NamedSharding(MESH_DPTP, P("dp", "tp")))
    return jnp.tanh(h)


PROGRAM = f
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((32, 8), jnp.float32),
)
