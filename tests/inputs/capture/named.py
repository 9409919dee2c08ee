"""A script whose jitted function's ``__name__`` is the first argument, whatever it holds.

Run by the capture tests with its mesh's devices faked; it is never imported by shardscope.
"""

import sys

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))


def step(x):
    return jnp.tanh(x) * 2


step.__name__ = sys.argv[1]
x = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("data", None)))
print(jax.jit(step)(x).sharding.spec)
