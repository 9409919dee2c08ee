"""Multi-head self-attention: heads are split out of the hidden dimension by a reshape."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

BATCH, SEQ, D_MODEL, HEADS = 8, 64, 128, 8
HEAD_DIM = D_MODEL // HEADS


def attention(params, x):
    b, s, _ = x.shape
    with jax.named_scope("qkv"):
        q = (x @ params["wq"]).reshape(b, s, HEADS, HEAD_DIM)
        k = (x @ params["wk"]).reshape(b, s, HEADS, HEAD_DIM)
        v = (x @ params["wv"]).reshape(b, s, HEADS, HEAD_DIM)
    with jax.named_scope("scores"):
        logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(HEAD_DIM).astype(x.dtype)
        weights = jax.nn.softmax(logits, axis=-1)
    with jax.named_scope("mix"):
        out = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, D_MODEL)
    with jax.named_scope("out_proj"):
        return out @ params["wo"]


PROGRAM = attention
EXAMPLE_ARGS = (
    {
        name: jax.ShapeDtypeStruct((D_MODEL, D_MODEL), jnp.float32)
        for name in ("wq", "wk", "wv", "wo")
    },
    jax.ShapeDtypeStruct((BATCH, SEQ, D_MODEL), jnp.float32),
)
MESH = {"data": 2, "model": 4}
SPECS = {
    "x": P("data", None, None),
    "params['wq']": P(None, "model"),
    "params['wk']": P(None, "model"),
    "params['wv']": P(None, "model"),
    "params['wo']": P("model", None),
}
