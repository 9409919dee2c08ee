"""A next-token loss: the sequence sharded over ``seq`` and sliced by one each way."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def next_token_loss(tokens, logits):
    inputs = logits[:, :-1]
    targets = tokens[:, 1:]
    return jnp.mean((inputs - targets) ** 2)


PROGRAM = next_token_loss
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 64), jnp.float32),
    jax.ShapeDtypeStruct((8, 64), jnp.float32),
)
MESH = {"data": 2, "seq": 4}
SPECS = {"tokens": P("data", "seq"), "logits": P("data", "seq")}
