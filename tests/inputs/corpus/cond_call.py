"""A conditional, a nested jit (a func.call) and a sharding constraint written in the code."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.jit
def inner(a, b):
    return jnp.sin(a) * b


def cond_call(x, y, flag):
    z = inner(x, y)
    z = jax.lax.with_sharding_constraint(z, P(None, "model"))
    return jax.lax.cond(flag > 0, lambda v: v * 2.0, lambda v: v - 1.0, z)


PROGRAM = cond_call
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((), jnp.int32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"x": P("data", None)}
