"""A mixture-of-experts layer in shard_map: tokens sent to their expert's devices with
``all_to_all`` and back, an auxiliary loss averaged with the user's own ``pmean``; the
gradient of the loss."""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@partial(
    jax.shard_map,
    in_specs=(P("expert", None, None), P("expert", None, None)),
    out_specs=(P("expert", None, None), P()),
    axis_names={"expert"},
)
def experts(tokens, w):
    routed = jax.lax.all_to_all(tokens, "expert", 0, 0, tiled=True)
    hidden = jnp.einsum("ecd,edf->ecf", routed, w)
    aux = jax.lax.pmean(jnp.mean(hidden**2), "expert")
    back = jax.lax.all_to_all(hidden, "expert", 0, 0, tiled=True)
    return back, aux


def loss(tokens, w):
    out, aux = experts(tokens, w)
    return out.mean() + 0.01 * aux


def train_step(tokens, w):
    return jax.value_and_grad(loss, argnums=1)(tokens, w)


PROGRAM = train_step
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 8, 16), jnp.float32),
    jax.ShapeDtypeStruct((4, 16, 16), jnp.float32),
)
MESH = {"expert": 4}
SPECS = {"tokens": P("expert", None, None), "w": P("expert", None, None)}
