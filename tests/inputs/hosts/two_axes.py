"""A matmul on a data=2, model=4 mesh whose contraction is sharded over model (an
all-reduce over model: within a host when 2 hosts hold 4 devices each) and whose second
result sums over the data-sharded batch (an all-reduce over data: across hosts)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def program(x, w):
    h = jnp.tanh(x @ w)
    return h, h.sum(axis=0)


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 32), jnp.float32),
    jax.ShapeDtypeStruct((32, 8), jnp.float32),
)
MESH = {"data": 2, "model": 4}
SPECS = {"x": P("data", "model"), "w": P("model", None), "result[0]": P("data", None)}
