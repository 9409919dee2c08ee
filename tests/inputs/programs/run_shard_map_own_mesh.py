"""shard_map on the program's own Explicit mesh: once from the context mesh (no mesh=,
in_specs from the argument's type), once with mesh=MESH."""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4,), ("data",))


def program(x):
    y = jax.shard_map(lambda a: a * 2 + jax.lax.psum(a, "data"), out_specs=P("data"))(x)
    return jax.shard_map(
        lambda b: b - jax.lax.pmax(b, "data"), mesh=mesh, in_specs=P("data"), out_specs=P("data")
    )(y)


PROGRAM = program
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("data"))),)
MESH = mesh
