"""A mesh of 4 devices built at import, and shardings on it in the code: no unsharded
reference can run them on one device."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))


def program(x, w):
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", None)))
    return jnp.tanh(y), y.sum()


PROGRAM = jax.jit(program, in_shardings=(NamedSharding(mesh, P("data")), None))
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 4), jnp.float32),
    jax.ShapeDtypeStruct((4, 4), jnp.float32),
)
MESH = mesh
