"""Starts, at import, children that would outlive the load or the run, each in a session
of its own: one that keeps the environment, one with an environment of its own, and one
forked without a new program; then defines a working program.

With ``SETSID_AT_IMPORT_PIDS`` set, each import adds its children's pids to that file.
"""

import os
import subprocess
import sys
import time

import jax.numpy as jnp

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]
pids = [
    subprocess.Popen(SLEEP, start_new_session=True).pid,
    subprocess.Popen(SLEEP, start_new_session=True, env={}).pid,
]
child = os.fork()
if child == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
pids.append(child)
if os.environ.get("SETSID_AT_IMPORT_PIDS"):
    with open(os.environ["SETSID_AT_IMPORT_PIDS"], "a") as f:
        f.write(" ".join(map(str, pids)) + "\n")


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jnp.zeros((4, 4)),)
