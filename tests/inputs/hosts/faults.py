"""``capture --hosts 2`` faults, by the first argument: ``raise`` (host 1 raises after
joining), ``no-init`` (no jax.distributed.initialize()), ``hang`` (host 1 sleeps before
joining), ``kill`` (host 1 kills itself with SIGKILL after a first step), ``other``
(host 1 compiles one more function), ``wrong-id`` (passes process_id=0 on every host),
``exit`` (host 1 leaves through ``sys.exit(3)`` after a first step while host 0 sleeps,
its heartbeats going on), ``exit-raise`` (host 1 leaves through ``raise SystemExit(3)``
while host 0 waits for it in a second step), ``lag`` (host 0 sleeps at the end of the
script, its heartbeats going on)."""

import os
import signal
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mode = sys.argv[1]
host = int(os.environ["JAX_PROCESS_ID"])
if mode == "hang" and host == 1:
    time.sleep(3600)
if mode == "wrong-id":
    jax.distributed.initialize(process_id=0)
elif mode != "no-init":
    jax.distributed.initialize()
if mode == "raise" and host == 1:
    raise ValueError("host one broke")

mesh = Mesh(np.array(jax.devices()).reshape(2, -1), ("data", "model"))
sharding = NamedSharding(mesh, P("data", None))


@jax.jit
def step(x):
    return jnp.sum(jnp.sin(x))


x = jax.make_array_from_process_local_data(sharding, np.ones((4, 8), np.float32), (8, 8))
print(float(step(x)), file=sys.stderr)
if mode == "kill" and host == 1:
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "exit" and host == 0:
    time.sleep(3600)
if mode in ("exit", "exit-raise") and host == 1:
    print("host one gives up", file=sys.stderr)
    if mode == "exit":
        sys.exit(3)
    raise SystemExit(3)
if mode == "other" and host == 1:
    print(float(jax.jit(lambda v: jnp.max(v))(np.ones(3))), file=sys.stderr)
print(float(step(x + 1)), file=sys.stderr)
if mode == "lag" and host == 0:
    time.sleep(3600)
