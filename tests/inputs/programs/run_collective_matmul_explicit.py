"""The collective matmul of run_collective_matmul on a mesh jax.make_mesh builds with its
default axis types (Explicit): its shard_map's in_specs must match the arguments' types,
so the arguments are traced carrying SPECS. MESH is the same mesh as a dict."""

import jax
import jax.numpy as jnp
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
    return jax.shard_map(
        local,
        mesh=jax.make_mesh((2, 4), ("data", AXIS)),
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
