"""Explicit-mode gradient accumulation over microbatches with ZeRO-1 optimizer state: the
summed gradients resharded like the state, the update resharded like the parameters."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, reshard
from jax.sharding import PartitionSpec as P

MESH = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)


def loss(w, x):
    h = jax.nn.relu(x @ w["a"])
    y = jnp.matmul(h, w["b"], out_sharding=P("data", None))
    return jnp.mean(y**2)


def train_step(w, opt, batch):
    def micro(acc, xb):
        g = jax.grad(loss)(w, xb)
        return jax.tree.map(jnp.add, acc, g), None

    zeros = jax.tree.map(jnp.zeros_like, w)
    acc, _ = jax.lax.scan(micro, zeros, batch)
    acc = jax.tree.map(lambda g: reshard(g, P("data")), acc)
    opt = jax.tree.map(lambda m, g: 0.9 * m + g, opt, acc)
    update = jax.tree.map(lambda m, p: reshard(m, jax.typeof(p).sharding.spec), opt, w)
    return jax.tree.map(lambda p, u: p - 0.01 * u, w, update), opt


def _struct(shape, spec):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(MESH, spec))


PROGRAM = train_step
EXAMPLE_ARGS = (
    {"a": _struct((32, 64), P(None, "model")), "b": _struct((64, 32), P("model", None))},
    {"a": _struct((32, 64), P("data")), "b": _struct((64, 32), P("data"))},
    _struct((2, 16, 32), P(None, "data", None)),
)
