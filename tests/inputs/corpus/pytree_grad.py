"""value_and_grad of a two-layer model whose parameters are a nested pytree."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def loss(params, batch):
    h = jnp.tanh(batch["x"] @ params["layers"][0]["w"] + params["layers"][0]["b"])
    out = h @ params["layers"][1]["w"]
    return jnp.mean((out - batch["y"]) ** 2)


def step(params, batch):
    value, grads = jax.value_and_grad(loss)(params, batch)
    return value, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


PROGRAM = step
EXAMPLE_ARGS = (
    {
        "layers": [
            {
                "w": jax.ShapeDtypeStruct((32, 64), jnp.float32),
                "b": jax.ShapeDtypeStruct((64,), jnp.float32),
            },
            {"w": jax.ShapeDtypeStruct((64, 16), jnp.float32)},
        ]
    },
    {
        "x": jax.ShapeDtypeStruct((16, 32), jnp.float32),
        "y": jax.ShapeDtypeStruct((16, 16), jnp.float32),
    },
)
MESH = {"data": 4, "model": 2}
SPECS = {
    "batch['x']": P("data", None),
    "params['layers'][0]['w']": P(None, "model"),
}
