"""A fori_loop whose body reshapes and transposes its carry."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def loop_reshape(x, w):
    def body(i, h):
        h = jnp.tanh(h @ w)
        return h.reshape(8, 4, 64).reshape(32, 64)

    h = jax.lax.fori_loop(0, 3, body, x)
    return h.T, h.reshape(4, 8, 64).sum(1)


PROGRAM = loop_reshape
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((32, 64), jnp.float32),
    jax.ShapeDtypeStruct((64, 64), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"x": P("data", None), "w": P(None, "model")}
