"""A data-parallel gradient whose all-reduces XLA compiles inside a scan's body (under
jax.checkpoint and a nested jax.jit), inside a fori_loop's body, and combined into one
for the top-level parameters."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.jit
def inner(h, w):
    return jnp.tanh(h @ w)


def loss(params, x):
    h = jnp.tanh(x @ params["w0"] + params["b0"])

    def step(h, w):
        return jax.checkpoint(lambda h: inner(h, w))(h), None

    h, _ = jax.lax.scan(step, h, params["ws"])
    h = jax.lax.fori_loop(0, 2, lambda i, h: jnp.tanh(h @ params["v"]), h)
    return (h @ params["out"]).sum()


def program(params, x):
    return jax.grad(loss)(params, x)


PROGRAM = program
EXAMPLE_ARGS = (
    {
        "w0": jax.ShapeDtypeStruct((8, 16), jnp.float32),
        "b0": jax.ShapeDtypeStruct((16,), jnp.float32),
        "ws": jax.ShapeDtypeStruct((3, 16, 16), jnp.float32),
        "v": jax.ShapeDtypeStruct((16, 16), jnp.float32),
        "out": jax.ShapeDtypeStruct((16, 4), jnp.float32),
    },
    jax.ShapeDtypeStruct((32, 8), jnp.float32),
)
MESH = {"data": 4}
SPECS = {"x": P("data", None)}
