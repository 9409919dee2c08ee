"""One worker that loads, predicts, compiles and runs (``source.run_file``), against the two
processes it replaces in the CLI (``load_program`` then ``run_program`` with a propagation
made here), and its one-line errors in either stage."""

import subprocess
import sys
import time

import pytest

from shardscope.backend.errors import ProgramError, ShardscopeError
from shardscope.backend.program.load import load_program, python_source
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.run.dispatch import run, run_program
from shardscope.backend.run.request import ProgramFile, RunRequest
from shardscope.backend.run.source import process_age
from shardscope.backend.sharding.mesh import Mesh
from tests.support.inputs import INPUTS, REPO

pytestmark = pytest.mark.slow
HOSTILE = INPUTS / "hostile"


def _source(source, **options):
    path, params, example = python_source(source)
    kind = "example" if example else "python"
    program = ProgramFile(path, params, name=example or path.stem, source=source, kind=kind)
    return run(RunRequest(program, runs=1, **options))


def _two_processes(source, mesh=None, specs=None):
    program = load_program(source)
    propagation = propagate(program, mesh, specs)
    return run_program(program, mesh, specs, propagation=propagation, runs=1)


def _collectives(result):
    return [
        (
            c.kind,
            c.device_groups,
            c.shape,
            c.bytes,
            c.source,
            [(p.kind, p.axes) for p in c.predicted],
        )
        for c in result.collectives
    ]


@pytest.mark.parametrize("example", ["mlp", "matmul6"])
def test_one_worker_reports_what_load_then_run_report(example):
    one = _source(f"example:{example}").result
    two = _two_processes(f"example:{example}")
    assert one.program == two.program == example
    assert (one.platform, one.device_count, one.mesh) == (two.platform, two.device_count, two.mesh)
    for mine, theirs in zip(one.outputs + one.arguments, two.outputs + two.arguments, strict=True):
        assert (mine.name, mine.spec, mine.shards) == (theirs.name, theirs.spec, theirs.shards)
        assert mine.max_rel_error == pytest.approx(theirs.max_rel_error, abs=1e-9)
    assert _collectives(one) == _collectives(two)
    assert one.predicted_only == two.predicted_only
    assert one.notes == two.notes
    assert one.memory == two.memory


def test_matmul6_keeps_its_unmatched_collectives_on_both_sides():
    result = _source("example:matmul6").result
    assert any(not c.predicted for c in result.collectives)
    assert len(result.predicted_only) == 3


def test_the_users_mesh_and_specs_replace_the_programs():
    mesh = Mesh.from_dict({"data": 2})
    done = _source("example:conflict", mesh=mesh, specs={"x": "data,_", "y": "_,data"})
    two = _two_processes("example:conflict", mesh, {"x": "data,_", "y": "_,data"})
    assert done.result.device_count == 2
    assert {a.name: a.spec for a in done.result.arguments} == {"x": "data,_", "y": "_,data"}
    assert _collectives(done.result) == _collectives(two)
    assert done.program_mesh == load_program("example:conflict").mesh


def test_the_report_says_where_the_time_went():
    started = time.monotonic()
    result = _source("example:mlp").result
    wall = time.monotonic() - started
    stages = result.stages
    for name in ("worker_start_and_imports", "lower", "propagate", "compile", "run", "shards"):
        assert stages[name] >= 0
    assert stages["compile"] == pytest.approx(result.compile_s, abs=0.05)
    assert sum(v for k, v in stages.items() if k != "before_worker") <= wall
    assert "stages" in result.to_json()


def test_a_program_whose_import_needs_more_devices_gets_a_worker_with_them(tmp_path):
    path = tmp_path / "big_mesh.py"
    path.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n"
        "mesh = jax.make_mesh((4, 4), ('a', 'b'))\n"
        "PROGRAM = lambda x: x * 2\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((16, 8), jnp.float32),)\n"
        "MESH = {'a': 4, 'b': 4}\nSPECS = {'x': P(('a', 'b'), None)}\n"
    )
    result = _source(str(path)).result
    assert result.device_count == 16
    assert sorted(s.device for s in result.arguments[0].shards) == list(range(16))


def test_a_program_that_raises_while_loading_says_what_load_says():
    path = HOSTILE / "raises.py"
    with pytest.raises(ProgramError) as caught:
        load_program(str(path))
    with pytest.raises(ShardscopeError) as ours:
        _source(str(path))
    assert str(ours.value) == str(caught.value)


def test_a_crash_while_loading_is_one_line_about_loading():
    path = HOSTILE / "kills_itself.py"
    with pytest.raises(ShardscopeError) as caught:
        _source(str(path))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: the worker loading this program was killed by SIGKILL")


def test_a_crash_while_running_is_one_line_about_the_run():
    with pytest.raises(ShardscopeError) as caught:
        _source(str(HOSTILE / "run_aborts.py"))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("run_aborts: the run crashed: its worker was killed by SIGABRT")


def test_a_program_that_raises_when_run_is_one_line():
    with pytest.raises(ShardscopeError) as caught:
        _source(str(HOSTILE / "run_raises.py"))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{HOSTILE / 'run_raises.py'}:9: the run failed: ValueError")


def test_a_hang_while_loading_is_loadings_time_limit():
    path = HOSTILE / "hangs.py"
    started = time.monotonic()
    with pytest.raises(ProgramError) as caught:
        _source(str(path), timeout=2)
    assert time.monotonic() - started < 30
    assert str(caught.value) == (
        f"{path}: loading did not finish within 2 s (does the program loop or wait "
        f"forever?); fix it, or allow more time with --timeout"
    )


def test_a_hang_while_running_is_the_runs_time_limit():
    with pytest.raises(ShardscopeError, match="^the run did not finish within 5 s"):
        _source(str(HOSTILE / "run_hangs.py"), timeout=5)


def test_a_mesh_too_large_is_refused_before_any_worker_starts(monkeypatch):
    from shardscope.backend.isolation import jobs

    monkeypatch.setattr(jobs.subprocess, "Popen", None)  # no worker may start
    with pytest.raises(ShardscopeError, match="needs 128 devices but 64 CPU devices"):
        _source("example:mlp", mesh=Mesh.from_dict({"data": 64, "model": 2}))


def test_process_age_counts_from_the_process_start():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(0.5)\n"
            "from shardscope.backend.run.source import process_age; print(process_age())",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert 0.5 <= float(done.stdout) < 30
    assert process_age() > 0


def test_the_host_count_before_the_mesh_is_known():
    from shardscope.backend.errors import MeshError
    from shardscope.backend.run.source import host_count

    assert host_count(None, None) == 1
    assert host_count(4, "data=2") == 4  # --hosts wins; apply_hosts checks them together
    assert host_count(None, "data=2,model=2") == 4
    with pytest.raises(MeshError, match="^--dcn data lays the whole axis over hosts"):
        host_count(None, "data")
    with pytest.raises(MeshError, match="^--dcn 'data=x': give a whole number of hosts"):
        host_count(None, "data=x")


def test_dcn_lays_the_programs_own_mesh_over_the_hosts_once_the_worker_knows_it():
    result = _source(str(INPUTS / "hosts" / "two_axes.py"), dcn="model=2").result
    assert result.hosts == 2
    assert result.device_order == [0, 1, 4, 5, 2, 3, 6, 7]
    crossing = {c.device_groups: c.crosses_hosts for c in result.collectives}
    assert crossing == {((0, 1, 4, 5), (2, 3, 6, 7)): True, ((0, 2), (1, 3), (4, 6), (5, 7)): False}
    assert [c.predicted[0].axes for c in result.collectives] == [("model",), ("data",)]
