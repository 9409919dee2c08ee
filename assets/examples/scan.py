"""An Elman RNN over a sequence with ``lax.scan``: the loop body is a while region."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

STEPS, BATCH, D_IN, D_HIDDEN = 16, 8, 32, 64


def rnn(params, xs, h0):
    def cell(h, x):
        with jax.named_scope("cell"):
            h = jnp.tanh(h @ params["w_hh"] + x @ params["w_xh"] + params["b"])
        return h, h

    with jax.named_scope("rnn"):
        h_last, hs = jax.lax.scan(cell, h0, xs)
    return h_last, hs.mean(axis=0)


PROGRAM = rnn
EXAMPLE_ARGS = (
    {
        "w_hh": jax.ShapeDtypeStruct((D_HIDDEN, D_HIDDEN), jnp.float32),
        "w_xh": jax.ShapeDtypeStruct((D_IN, D_HIDDEN), jnp.float32),
        "b": jax.ShapeDtypeStruct((D_HIDDEN,), jnp.float32),
    },
    jax.ShapeDtypeStruct((STEPS, BATCH, D_IN), jnp.float32),
    jax.ShapeDtypeStruct((BATCH, D_HIDDEN), jnp.float32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"h0": P("data", None), "params['w_hh']": P(None, "model")}
