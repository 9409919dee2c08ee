"""A program file that builds its mesh at import (MESH = mesh) and shards on that mesh's
devices in its code and in its jax.jit's in_shardings."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def program(x, w):
    h = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    return jnp.tanh(h), h.sum(axis=0)


PROGRAM = jax.jit(program, in_shardings=(NamedSharding(mesh, P("data")), None))
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
)
MESH = mesh
