"""A gradient step with an argument it never reads (the bias): ``jax.jit`` leaves it out
of the lowered module, and a run must still take it."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def loss(params, x):
    return jnp.sum(jnp.tanh(x @ params["w"]))


def step(params, x):
    return jax.grad(loss)(params, x)


PROGRAM = step
EXAMPLE_ARGS = ({"w": jnp.ones((4, 4)), "b": jnp.ones((4,))}, jnp.ones((8, 4)))
MESH = {"data": 2, "model": 2}
SPECS = {"x": P("data", None), "params['w']": P(None, "model")}
