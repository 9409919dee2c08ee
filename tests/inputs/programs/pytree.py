"""A program with nested pytree arguments, keyword arguments and a sharding constraint."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def step(params, batch, *, scale):
    h = batch["x"]
    for i, layer in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}"):
            h = jnp.tanh(h @ layer["w"] + layer["b"])
    h = jax.lax.with_sharding_constraint(h, P("data", None))
    return {"out": h * scale["s"], "mean": h.mean()}


PROGRAM = step
EXAMPLE_ARGS = (
    {
        "layers": [
            {
                "w": jax.ShapeDtypeStruct((8, 8), jnp.float32),
                "b": jax.ShapeDtypeStruct((8,), jnp.float32),
            },
            {
                "w": jax.ShapeDtypeStruct((8, 8), jnp.float32),
                "b": jax.ShapeDtypeStruct((8,), jnp.float32),
            },
        ]
    },
    {"x": jax.ShapeDtypeStruct((4, 8), jnp.float32)},
)
EXAMPLE_KWARGS = {"scale": {"s": jax.ShapeDtypeStruct((), jnp.float32)}}
MESH = {"data": 2, "model": 2}
SPECS = {"batch['x']": P("data")}
