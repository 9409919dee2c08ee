"""consent: a session's program never runs the Python file it names until the user allows it.

The backend half of the window's questions (tests/app/window/test_code_consent.py): the
run and the GSPMD comparison refuse such a file, an example runs shardscope's own example
whatever path the session gives, and the command line opens no session at all. A marker
file shows whether anything ran.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import gspmd_differences
from shardscope.backend.program.consent import (
    SourceNotAllowed,
    allow,
    needs_consent,
    python_file,
    runnable_file,
)
from shardscope.backend.program.load import EXAMPLES_DIR, load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.run.dispatch import run_program
from shardscope.backend.run.request import RunRequest
from shardscope.backend.run.runner import plan_run
from shardscope.backend.session.document import Session
from shardscope.backend.session.saved_program import pack_program, unpack_program
from tests.support.inputs import REPO, write_input

PAYLOAD = """
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

open({marker!r}, "a").write("ran\\n")


def shmap(x, w):
    @partial(
        jax.shard_map, in_specs=(P("data", None), P()), out_specs=P("data", None),
        axis_names={{"data"}},
    )
    def local(a, b):
        return jnp.tanh(a @ b)

    return local(x, w) * 2.0


PROGRAM = shmap
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32), jax.ShapeDtypeStruct((4, 4), jnp.float32))
MESH = {{"data": 2, "model": 2}}
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The packed program entry of a marked shard_map program (loading it ran it once,
    then the marker was removed); the entry, the file and the marker."""
    folder = tmp_path_factory.mktemp("payload")
    marker = folder / "ran.txt"
    path = write_input(folder, "payload.py", PAYLOAD.format(marker=str(marker)))
    entry = json.loads(json.dumps(pack_program(load_program(path))))
    marker.unlink()
    return entry, path, marker


def from_session(saved, **changes):
    entry, path, _marker = saved
    return unpack_program({**entry, **changes}, entry["path"], "hostile.json")


def test_a_run_of_a_sessions_python_file_is_refused_until_allowed(saved):
    _entry, path, marker = saved
    program = from_session(saved)
    assert needs_consent(program) == path
    with pytest.raises(SourceNotAllowed) as refused:
        run_program(program, timeout=60)
    assert refused.value.path == path and path in str(refused.value)
    assert "\n" not in str(refused.value)
    assert not marker.exists()
    allow(program, path)
    assert needs_consent(program) is None
    assert plan_run(RunRequest(program)).job["path"] == path


def test_allowing_another_file_allows_nothing(saved, tmp_path):
    program = from_session(saved)
    with pytest.raises(ShardscopeError, match="nothing was allowed"):
        allow(program, str(tmp_path / "other.py"))
    assert needs_consent(program) == saved[1]


def test_the_allowance_is_not_saved_with_the_session(saved, tmp_path):
    program = from_session(saved)
    allow(program, saved[1])
    again = unpack_program(json.loads(json.dumps(pack_program(program))), "s", "s.json")
    assert needs_consent(again) == saved[1]


def test_an_example_runs_its_own_file_whatever_path_the_session_names(saved):
    program = from_session(saved, kind="example", name="mlp")
    program.source = "example:mlp"
    assert python_file(program) == str(EXAMPLES_DIR / "mlp.py")
    assert needs_consent(program) is None
    assert plan_run(RunRequest(program, {"data": 2, "model": 2})).job["path"] == str(
        EXAMPLES_DIR / "mlp.py"
    )
    program.source = "example:../../payload"
    with pytest.raises(ShardscopeError, match="no built-in example"):
        plan_run(RunRequest(program, {"data": 2, "model": 2}))
    assert not saved[2].exists()


@pytest.mark.parametrize("kind", ["mlir", "capture", "api"])
def test_data_kinds_have_no_file_to_run(saved, kind):
    program = from_session(saved, kind=kind)
    with pytest.raises(ShardscopeError, match="has no function to call"):
        runnable_file(program, "run")
    # Running one runs its module on seeded inputs, never the file the session names.
    assert run_program(program, timeout=60, runs=1).inputs == "seeded"
    assert not saved[2].exists()


@pytest.mark.slow
def test_the_gspmd_comparison_does_not_trace_a_sessions_file(saved):
    program = from_session(saved)
    result = propagate(program, program.mesh, {})
    with pytest.raises(SourceNotAllowed, match="which a session file names"):
        gspmd_differences(program, result, timeout=60)
    assert not saved[2].exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["load", "{s}"],
        ["propagate", "{s}", "--gspmd"],
        ["run", "{s}"],
        ["render", "{s}", "--out", "{o}"],
        ["render", "{s}", "--view", "run:result[0]", "--out", "{o}"],
    ],
    ids=["load", "propagate-gspmd", "run", "render", "render-run"],
)
def test_the_command_line_runs_nothing_a_session_names(saved, tmp_path, argv):
    entry, path, marker = saved
    session = tmp_path / "hostile.json"
    program = from_session(saved)
    state = Session()
    state.set_program(program)
    state.save(session)
    argv = [a.format(s=session, o=tmp_path / "out.png") for a in argv]
    done = subprocess.run(
        [sys.executable, str(REPO / "main.py"), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ, QT_QPA_PLATFORM="offscreen"),
    )
    assert not marker.exists(), f"{argv} ran the file the session names"
    assert done.returncode in (1, 2), done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error:"), done.stderr
    assert "Traceback" not in done.stderr
    assert not Path(tmp_path / "out.png").exists()
