"""A collective matmul in shard_map on a mesh it builds itself (mesh=jax.make_mesh):
each device multiplies its block of x by the block of w it holds, passing w's blocks
round the ring with ppermute; the program file's MESH is the same mesh as a dict, whose
abstract mesh is not the shard_map's (that one knows its devices)."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

AXIS = "model"


def local(x, w):
    size = jax.lax.axis_size(AXIS)
    index = jax.lax.axis_index(AXIS)
    rows = w.shape[0]
    out = jnp.zeros((x.shape[0], w.shape[1]), x.dtype)
    for step in range(size):
        block = (index + step) % size
        piece = jax.lax.dynamic_slice_in_dim(x, block * rows, rows, axis=1)
        out = out + piece @ w
        w = jax.lax.ppermute(w, AXIS, [(i, (i - 1) % size) for i in range(size)])
    return out


def program(x, w):
    mesh = jax.make_mesh((2, 4), ("data", AXIS), axis_types=(AxisType.Auto,) * 2)
    return jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(P("data", None), P(AXIS, None)),
        out_specs=P("data", None),
        check_vma=False,  # every device along model ends with the whole product
    )(x, w)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
)
MESH = {"data": 2, AXIS: 4}
SPECS = {"x": P("data", None), "w": P(AXIS, None)}
