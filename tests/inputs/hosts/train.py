"""A two-host SPMD script: each process reads its index from the environment, joins JAX's
distributed runtime, and runs a sharded matmul over the global mesh of every process's
devices (``capture --hosts 2`` runs it)."""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

jax.distributed.initialize()
index = int(os.environ["JAX_PROCESS_ID"])
hosts = int(os.environ["JAX_NUM_PROCESSES"])

devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
mesh = Mesh(np.array(devices).reshape(hosts, -1), ("data", "model"))
rows, inner, cols = 8 * hosts, 16, 8 * len(jax.local_devices())


@jax.jit
def matmul(x, w):
    return jnp.tanh(x @ w)


@jax.jit
def loss(x, w):
    return jnp.sum(matmul(x, w))


x_sharding = NamedSharding(mesh, P("data", None))
w_sharding = NamedSharding(mesh, P(None, "model"))
local_x = np.full((rows // hosts, inner), 0.01 * (index + 1), np.float32)
x = jax.make_array_from_process_local_data(x_sharding, local_x, (rows, inner))
w = jax.make_array_from_process_local_data(
    w_sharding, np.ones((inner, cols), np.float32), (inner, cols)
)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1
for _ in range(steps):
    y = matmul(x, w)
    total = float(loss(x, w))
print(f"process {index} of {hosts}: loss {total:.4f}, y {y.shape}", file=sys.stderr)
