"""A decoder-only transformer training step: loss, value_and_grad and an SGD update.

The number of layers is a parameter: ``example:transformer?layers=24``.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

_params = globals().get("SHARDSCOPE_PARAMS", {})
LAYERS = int(_params.get("layers", 2))
BATCH, SEQ, D_MODEL, HEADS, D_FF, VOCAB = 8, 32, 64, 4, 256, 128
HEAD_DIM = D_MODEL // HEADS
LEARNING_RATE = 1e-3


def layer_norm(x, scale):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def attention(p, x):
    b, s, _ = x.shape
    q = (x @ p["wq"]).reshape(b, s, HEADS, HEAD_DIM)
    k = (x @ p["wk"]).reshape(b, s, HEADS, HEAD_DIM)
    v = (x @ p["wv"]).reshape(b, s, HEADS, HEAD_DIM)
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(HEAD_DIM).astype(x.dtype)
    mask = jnp.tril(jnp.ones((s, s), dtype=bool))
    logits = jnp.where(mask, logits, -1e9)
    weights = jax.nn.softmax(logits, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, s, D_MODEL)
    return out @ p["wo"]


def mlp(p, x):
    return jax.nn.gelu(x @ p["w_in"]) @ p["w_out"]


def forward(params, tokens):
    x = params["embed"][tokens]
    for i, layer in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}"):
            with jax.named_scope("attn"):
                x = x + attention(layer, layer_norm(x, layer["ln1"]))
            with jax.named_scope("mlp"):
                x = x + mlp(layer, layer_norm(x, layer["ln2"]))
    with jax.named_scope("head"):
        return layer_norm(x, params["ln_f"]) @ params["embed"].T


def loss_fn(params, tokens, targets):
    logits = forward(params, tokens)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()


def train_step(params, tokens, targets):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
    with jax.named_scope("sgd"):
        new_params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, loss


def _f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def _layer():
    return {
        "ln1": _f32(D_MODEL),
        "wq": _f32(D_MODEL, D_MODEL),
        "wk": _f32(D_MODEL, D_MODEL),
        "wv": _f32(D_MODEL, D_MODEL),
        "wo": _f32(D_MODEL, D_MODEL),
        "ln2": _f32(D_MODEL),
        "w_in": _f32(D_MODEL, D_FF),
        "w_out": _f32(D_FF, D_MODEL),
    }


PROGRAM = train_step
EXAMPLE_ARGS = (
    {
        "embed": _f32(VOCAB, D_MODEL),
        "layers": [_layer() for _ in range(LAYERS)],
        "ln_f": _f32(D_MODEL),
    },
    jax.ShapeDtypeStruct((BATCH, SEQ), jnp.int32),
    jax.ShapeDtypeStruct((BATCH, SEQ), jnp.int32),
)
MESH = {"data": 4, "model": 2}
SPECS = {"tokens": P("data", None), "targets": P("data", None)}
for _i in range(LAYERS):
    SPECS[f"params['layers'][{_i}]['w_in']"] = P(None, "model")
    SPECS[f"params['layers'][{_i}]['w_out']"] = P("model", None)
