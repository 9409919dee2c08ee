"""``dispatch.run``: each kind of program goes its own way; a module on hosts is refused
before any worker starts."""

import subprocess

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.run import dispatch
from shardscope.backend.run.request import ProgramFile, ProgramLoader, RunDone, RunRequest
from tests.support.inputs import INPUTS

MLIR = INPUTS / "mlir" / "plain.mlir"


@pytest.fixture
def no_worker(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("no worker may start")

    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.mark.parametrize("hosts", [{"hosts": 2}, {"dcn": "data=2"}])
def test_a_module_on_several_hosts_is_refused_before_a_worker_starts(no_worker, hosts):
    program = load_program(str(MLIR))
    with pytest.raises(ShardscopeError, match=r"^plain: --hosts runs a Python program"):
        dispatch.run(RunRequest(program, {"data": 2}, **hosts))


def test_each_kind_goes_to_its_own_runner(tmp_path, monkeypatch):
    seen = []
    program = load_program("example:mlp")
    module = load_program(str(MLIR))
    monkeypatch.setattr(
        "shardscope.backend.run.source.run_file",
        lambda file, request: seen.append(("file", file.name)) or RunDone(None, None),
    )
    monkeypatch.setattr(
        "shardscope.backend.run.runner.run_python",
        lambda request: seen.append(("python", request.program.name)),
    )

    def seeded(request, load):
        loaded, _ = load()
        seen.append(("module", loaded.name))
        return None, loaded

    monkeypatch.setattr("shardscope.backend.run.module_run.run_seeded", seeded)
    file = ProgramFile(tmp_path / "prog.py", {}, name="prog", source="prog.py", kind="python")
    dispatch.run(RunRequest(file))
    done = dispatch.run(RunRequest(program))
    dispatch.run(RunRequest(module))
    dispatch.run(RunRequest(ProgramLoader(lambda: (module, None))))
    assert seen == [("file", "prog"), ("python", "mlp"), ("module", "plain"), ("module", "plain")]
    assert done.program_mesh == program.mesh


def test_a_loaded_module_on_hosts_is_refused_once_it_is_loaded(monkeypatch):
    module = load_program(str(MLIR))
    monkeypatch.setattr(
        "shardscope.backend.run.module_run.run_seeded", lambda request, load: load()
    )
    request = RunRequest(ProgramLoader(lambda: (module, None)), hosts=2)
    with pytest.raises(ShardscopeError, match=r"^plain: --hosts runs a Python program"):
        dispatch.run(request)
