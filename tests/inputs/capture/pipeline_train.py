"""A pipeline training script as users write it: its own mesh, stages sharded over
``stage``, an RMSNorm in each tick, the state rotated by ``jnp.roll``, a next-token loss
on a sequence sharded over ``stage``.

Run by the tests with the mesh's devices faked. ``python pipeline_train.py HLO`` also
writes the compiled step's HLO text to HLO, as the script's own compile made it.
"""

import sys

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("stage", "data"), axis_types=(AxisType.Auto,) * 2)


def rms_norm(x, scale):
    mean_square = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    return x * jax.lax.rsqrt(mean_square + 1e-6) * scale


def loss(params, state, microbatch, tokens):
    def tick(carry, _):
        out = jnp.tanh(jnp.einsum("sbd,sde->sbe", carry, params["w"]))
        out = rms_norm(out, params["scale"])
        rotated = jnp.roll(out, 1, axis=0).at[0].set(microbatch)
        return rotated, out[-1]

    state, outputs = jax.lax.scan(tick, state, None, length=4)
    predictions = outputs[:, :, :-1]
    return jnp.mean((predictions - tokens[:, :, 1:]) ** 2)


@jax.jit
def step(params, state, microbatch, tokens):
    value, grads = jax.value_and_grad(loss)(params, state, microbatch, tokens)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def placed(array, spec):
    return jax.device_put(array, NamedSharding(mesh, spec))


params = {
    "w": placed(jnp.ones((4, 16, 16)) * 0.01, P("stage")),
    "scale": placed(jnp.ones((16,)), P()),
}
state = placed(jnp.zeros((4, 8, 16)), P("stage", "data"))
microbatch = placed(jnp.ones((8, 16)), P("data"))
tokens = placed(jnp.ones((4, 8, 16)), P(None, "data", "stage"))
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write(step.lower(params, state, microbatch, tokens).compile().as_text())
for _ in range(2):
    params, value = step(params, state, microbatch, tokens)
print("loss", float(value))
