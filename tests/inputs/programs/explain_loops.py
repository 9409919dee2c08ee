"""Partial sums XLA all-reduces in a nested jit at top level and in the body of a scan
inside a scan (2 outer steps of 3 inner ones)."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.jit
def project(x, w):
    return x @ w


def program(x, w, ws):
    h = jnp.tanh(project(x, w))

    def outer(h, group):
        def inner(h, v):
            return jnp.tanh(h @ v), None

        h, _ = jax.lax.scan(inner, h, group)
        return h, None

    h, _ = jax.lax.scan(outer, h, ws)
    return h


PROGRAM = program
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((16, 16), jnp.float32),
    jax.ShapeDtypeStruct((2, 3, 16, 16), jnp.float32),
)
MESH = {"model": 4}
SPECS = {"x": P(None, "model"), "w": P("model", None), "ws": P(None, None, "model", None)}
