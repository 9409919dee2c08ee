"""A training step jitted once and compiled twice: its first call takes the parameters
replicated, and its update gives them back sharded like the optimizer state, so its
second and third calls run a second compile.

Each call prints how many compiles the jitted step holds after it (``_cache_size``), so a
plain run says by itself which call compiled. Run by the capture tests with its mesh's
devices faked; it is never imported by shardscope.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("data",))
by_state = NamedSharding(mesh, P("data"))


@jax.jit
def update(params, opt_state, x):
    grad = jnp.tanh(params * x)
    opt_state = 0.9 * opt_state + grad
    params = jax.lax.with_sharding_constraint(params - 0.1 * opt_state, by_state)
    return params, opt_state


params = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P()))
opt_state = jax.device_put(jnp.zeros((16, 4)), by_state)
x = jnp.ones((16, 4))
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for step in range(steps):
    spec = params.sharding.spec
    params, opt_state = update(params, opt_state, x)
    print(f"call {step + 1}: params {spec}, compiles {update._cache_size()}")
