"""An RMSNorm over a hidden dimension sharded over ``tensor``, outside any loop, then a
projection; the gradient of its scale and of the projection."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def rms_norm(x, scale):
    mean_square = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(mean_square + 1e-6) * scale


def loss(scale, w, x):
    return jnp.sum(rms_norm(x, scale) @ w)


def train_step(scale, w, x):
    return jax.value_and_grad(loss, argnums=(0, 1))(scale, w, x)


PROGRAM = train_step
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((64,), jnp.float32),
    jax.ShapeDtypeStruct((64, 32), jnp.float32),
    jax.ShapeDtypeStruct((8, 16, 64), jnp.float32),
)
MESH = {"data": 2, "tensor": 4}
SPECS = {"scale": P("tensor"), "w": P("tensor", None), "x": P("data", None, "tensor")}
