"""Starts children that would outlive it, each in a session of its own (one with an
environment of its own too), then compiles a function and calls it three times.

``setsid_child.py [PIDS_FILE] [hang]``: the children's pids go to PIDS_FILE; with
``hang`` it then waits forever.
"""

import os
import subprocess
import sys
import time

SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]
pids = [
    subprocess.Popen(SLEEP, start_new_session=True).pid,
    subprocess.Popen(SLEEP, start_new_session=True, env={}).pid,
]
child = os.fork()
if child == 0:
    os.setsid()
    time.sleep(300)
    os._exit(0)
pids.append(child)
args = sys.argv[1:]
if args and args[0] != "hang":
    with open(args[0], "w") as f:
        f.write(" ".join(map(str, pids)))

import jax  # noqa: E402 - after the fork: a process with JAX's threads should not fork
import jax.numpy as jnp  # noqa: E402

step = jax.jit(lambda x: x * 2)
x = jnp.ones(4)
for _ in range(3):
    x = step(x)
if "hang" in args:
    time.sleep(300)
