"""A training script as users write it: its own 8-device mesh, two jitted functions, a loop.

Run by the capture tests with the mesh's devices faked; it is never imported by shardscope.
"""

import sys

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


@jax.jit
def predict(w, x):
    return jnp.tanh(x @ w)


def loss(w, x):
    return predict(w, x).sum()


grad = jax.jit(jax.grad(loss))

w = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P(None, "model")))
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("data", None)))
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
for _ in range(steps):
    w = w - 0.1 * grad(w, x)
print("trained; predictions are", predict(w, x).sharding.spec)
