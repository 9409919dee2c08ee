"""Two-layer MLP forward pass: data parallel on the batch, tensor parallel on the hidden layer."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

BATCH, D_IN, D_HIDDEN, D_OUT = 32, 64, 256, 16


def mlp(params, x):
    with jax.named_scope("layer1"):
        h = jax.nn.relu(x @ params["w1"] + params["b1"])
    with jax.named_scope("layer2"):
        return h @ params["w2"] + params["b2"]


PROGRAM = mlp
EXAMPLE_ARGS = (
    {
        "w1": jax.ShapeDtypeStruct((D_IN, D_HIDDEN), jnp.float32),
        "b1": jax.ShapeDtypeStruct((D_HIDDEN,), jnp.float32),
        "w2": jax.ShapeDtypeStruct((D_HIDDEN, D_OUT), jnp.float32),
        "b2": jax.ShapeDtypeStruct((D_OUT,), jnp.float32),
    },
    jax.ShapeDtypeStruct((BATCH, D_IN), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {
    "x": P("data", None),
    "params['w1']": P(None, "model"),
    "params['w2']": P("model", None),
}
