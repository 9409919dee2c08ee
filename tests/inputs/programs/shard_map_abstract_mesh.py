"""``jax.shard_map`` given ``mesh=jax.sharding.get_abstract_mesh()`` inside the program:
the mesh in context as the program is traced, named explicitly; a sum over data."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x, w):
    local = lambda a, b: jax.lax.psum(jnp.sin(a @ b), "data")  # noqa: E731
    return jax.shard_map(
        local,
        mesh=jax.sharding.get_abstract_mesh(),
        in_specs=(P(None, "data"), P("data", None)),
        out_specs=P(),
    )(x, w)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((4, 8), jnp.float32),
    jax.ShapeDtypeStruct((8, 6), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P(None, "data"), "w": P("data", None)}
