"""Shared test setup.

JAX fixes the CPU device count when it first initialises, so the flag that gives tests
64 host devices (enough for real meshes of up to 64 devices) must be set before any
test module imports jax. shardscope itself is imported as installed (``make test``
installs the checkout in editable mode); the repository root goes on sys.path so tests
share helpers as ``tests.support.*``.
"""

import os
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=64"
).strip()

# Each test computes its unsharded references afresh; the cache's own tests point it at
# a folder of their own.
os.environ["SHARDSCOPE_CACHE_DIR"] = "off"
# The window draws for a local display (busy bars that move) unless a test says it is
# remote: the same tests whether or not they run over ssh.
os.environ.pop("SSH_CONNECTION", None)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
