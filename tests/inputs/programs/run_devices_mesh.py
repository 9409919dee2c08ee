"""A mesh built at import from every device, as Equinox's examples build theirs, and
shardings on it in the code."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((len(jax.devices()),), ("data",), axis_types=(AxisType.Auto,))


def program(x, w):
    y = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", None)))
    return jnp.tanh(y), y.sum()


PROGRAM = jax.jit(program, in_shardings=(NamedSharding(mesh, P("data")), None))
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 4), jnp.float32),
    jax.ShapeDtypeStruct((4, 4), jnp.float32),
)
MESH = mesh
