"""A shallow, wide program: many parameters, each used once, side by side (the shape of
a Flax model's parameter tree drawn as a graph)."""

import jax
import jax.numpy as jnp

BRANCHES = 96


def f(params, x):
    outs = [jnp.tanh(x @ params[f"w{i:02d}"]) for i in range(BRANCHES)]
    return jnp.stack(outs).sum(0)


PROGRAM = f
EXAMPLE_ARGS = (
    {f"w{i:02d}": jax.ShapeDtypeStruct((16, 8), jnp.float32) for i in range(BRANCHES)},
    jax.ShapeDtypeStruct((4, 16), jnp.float32),
)
