"""How a run's worker starts: its module, and its devices (an accelerator's, or as many
fake CPU devices as the mesh has).

Kept apart from ``runner`` so the CLI can start a run's worker before it imports what
reads the worker's report (numpy, MLIR): nothing here imports more than the standard
library and the mesh.
"""

from __future__ import annotations

import importlib.util
import os

from shardscope.backend.errors import MeshError, ShardscopeError
from shardscope.backend.sharding.mesh import Mesh

WORKER = "shardscope.backend.run.worker"
# The worker's work, as messages name it.
WHAT = "the run"
DEFAULT_RUNS = 5
CPU_DEVICES_ENV = "SHARDSCOPE_RUN_CPU_DEVICES"
DEFAULT_CPU_DEVICES = 64
# Python packages of JAX's accelerator plugins: with one installed, JAX picks the device.
_ACCELERATOR_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu")


def cpu_device_limit() -> int:
    """How many fake CPU devices a run may ask for (``SHARDSCOPE_RUN_CPU_DEVICES``)."""
    text = os.environ.get(CPU_DEVICES_ENV, "").strip()
    if not text:
        return DEFAULT_CPU_DEVICES
    if not text.isdigit() or int(text) < 1:
        raise ShardscopeError(
            f"{CPU_DEVICES_ENV}={text!r} is not a number of devices: set it to e.g. 64"
        )
    return int(text)


def accelerator_installed() -> bool:
    """Whether a JAX GPU or TPU plugin is installed (the worker then lets JAX choose)."""
    return any(importlib.util.find_spec(name) is not None for name in _ACCELERATOR_PLUGINS)


def check_device_count(mesh: Mesh, limit: int | None = None) -> None:
    """Refuse a mesh with more devices than fake CPU devices may be attached."""
    limit = cpu_device_limit() if limit is None else limit
    if mesh.size > limit:
        raise MeshError(
            f"the mesh {mesh.describe()} needs {mesh.size} devices but {limit} CPU devices "
            f"can be attached: use a mesh of at most {limit} devices (--mesh), or allow more "
            f"with {CPU_DEVICES_ENV}={mesh.size}"
        )


def run_environment(accelerator: bool) -> dict[str, str]:
    """Environment variables for the worker: the CPU, or JAX's own choice of platform
    where an accelerator plugin is installed."""
    env = {"JAX_ENABLE_COMPILATION_CACHE": "false"}
    env["JAX_PLATFORMS"] = "" if accelerator else "cpu"
    return env
