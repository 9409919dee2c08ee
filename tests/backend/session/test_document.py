"""Session documents: JSON round trip, recovery after a kill, no Qt in the backend."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session, read_recovery
from shardscope.backend.session.edits import CommandStack, SetDimSpec
from shardscope.backend.sharding.spec import Spec
from tests.support.inputs import REPO

ROOT = REPO


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp")


def test_save_open_round_trip(mlp, tmp_path):
    s = Session()
    s.set_program(mlp)
    x = mlp.graph.value_by_name("x").id
    CommandStack(s).push(SetDimSpec(x, 1, "model"))
    mid = mlp.graph.values[8].id  # an intermediate: saved by id
    s.set_spec(mid, Spec.of(None, "model"))
    s.update_view(expanded=["layer1"], function="main")
    path = tmp_path / "s.json"
    s.save(path)
    data = json.loads(path.read_text())
    assert data["source"] == "example:mlp"
    assert {"value": x, "name": "x", "spec": "data,model"} in data["specs"]

    t = Session()
    t.restore(Session.read(path))
    assert t.source == "example:mlp" and t.program is None
    t.set_program(mlp)
    assert dict(t.specs) == dict(s.specs)
    assert t.mesh == s.mesh
    assert t.view["expanded"] == ["layer1"]


def test_bad_session_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ShardscopeError, match="not JSON"):
        Session.read(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ShardscopeError, match="not a shardscope session"):
        Session.read(bad)


def test_display_spec_prefers_user_then_code(mlp):
    s = Session()
    s.set_program(mlp)
    x = mlp.graph.value_by_name("x").id
    assert s.spec_text(x) == "[data, _]"
    assert s.origin(x) == "user"
    assert s.spec_text(mlp.graph.values[8].id) == "?"


def test_killed_process_edits_are_recovered(tmp_path):
    recovery = tmp_path / "recovery.json"
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from shardscope.backend.session.edits import CommandStack, SetDimSpec
        from shardscope.backend.program.load import load_program
        from shardscope.backend.session.document import Session
        s = Session(recovery={str(recovery)!r})
        p = load_program("example:mlp")
        s.set_program(p)
        CommandStack(s).push(SetDimSpec(p.graph.value_by_name("x").id, 1, "model"))
        print("edited", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "edited"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    state = read_recovery(recovery)
    assert state is not None
    s = Session()
    s.restore(state)
    s.set_program(load_program("example:mlp"))
    assert s.spec(s.graph.value_by_name("x").id) == Spec.of("data", "model")


def test_backend_imports_no_qt():
    code = (
        "import sys, importlib, pkgutil, backend\n"
        "for m in ('shardscope.backend.session.document', 'shardscope.backend.session.edits'):\n"
        "    importlib.import_module(m)\n"
        "bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'pyqtgraph'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
