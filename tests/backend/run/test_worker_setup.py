"""How a run's worker starts: its device limit, the refusal of a larger mesh, its
environment, and that the module stays light enough to import before the worker starts."""

import subprocess
import sys

import pytest

from shardscope.backend.errors import MeshError, ShardscopeError
from shardscope.backend.run.worker_setup import (
    CPU_DEVICES_ENV,
    check_device_count,
    cpu_device_limit,
    run_environment,
)
from shardscope.backend.sharding.mesh import Mesh
from tests.support.inputs import REPO


def test_the_cpu_device_limit_defaults_to_64_and_can_be_set(monkeypatch):
    monkeypatch.delenv(CPU_DEVICES_ENV, raising=False)
    assert cpu_device_limit() == 64
    monkeypatch.setenv(CPU_DEVICES_ENV, "128")
    assert cpu_device_limit() == 128
    monkeypatch.setenv(CPU_DEVICES_ENV, "many")
    with pytest.raises(ShardscopeError, match="is not a number of devices"):
        cpu_device_limit()


def test_a_mesh_over_the_limit_is_refused_naming_both_fixes():
    check_device_count(Mesh.from_dict({"data": 4}), limit=4)
    with pytest.raises(MeshError) as caught:
        check_device_count(Mesh.from_dict({"data": 4, "model": 2}), limit=4)
    assert "needs 8 devices but 4 CPU devices" in str(caught.value)
    assert f"{CPU_DEVICES_ENV}=8" in str(caught.value)


def test_the_worker_runs_on_the_cpu_unless_an_accelerator_is_installed():
    assert run_environment(False)["JAX_PLATFORMS"] == "cpu"
    assert run_environment(True)["JAX_PLATFORMS"] == ""


def test_importing_it_imports_neither_jax_nor_numpy():
    code = (
        "import sys, shardscope.backend.run.worker_setup, shardscope.backend.run.source\n"
        "print(sorted(m for m in ('jax', 'numpy', 'jaxlib') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
