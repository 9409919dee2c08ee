"""An embedding gather followed by a 1-D convolution."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def gather_conv(table, ids, kernel):
    emb = jnp.take(table, ids, axis=0)  # [batch, seq, feat]
    y = jax.lax.conv_general_dilated(
        emb, kernel, window_strides=(1,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC")
    )
    return jax.nn.relu(y)


PROGRAM = gather_conv
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((128, 32), jnp.float32),
    jax.ShapeDtypeStruct((8, 16), jnp.int32),
    jax.ShapeDtypeStruct((3, 32, 64), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"ids": P("data", None), "kernel": P(None, None, "model")}
