"""Saving sessions: the JSON form, checked reading, atomic writes, recovery after a kill."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import CommandStack, SetDcn, SetDimSpec, SetHosts
from shardscope.backend.session.host_layout import HostLayout
from shardscope.backend.session.persistence import (
    FORMAT_VERSION,
    build_state,
    new_recovery_path,
    orphan_recoveries,
    read_recovery,
    read_state,
    state_dir,
    unpack_state,
    write_json,
)
from shardscope.backend.sharding.mesh import Mesh, MeshAxis
from shardscope.backend.sharding.spec import Spec, parse_spec
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
    s.update_view(expanded={"main": ["layer1"]}, function="main")
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
    assert t.view["expanded"] == {"main": ["layer1"]}


def _edited(mlp):
    """A session whose every saved field differs from a fresh one's."""
    s = Session()
    s.set_program(mlp)
    mesh = Mesh((MeshAxis("model", 2), MeshAxis("data", 4)), (7, 6, 5, 4, 3, 2, 1, 0))
    s.set_mesh(mesh, prune=True)
    x = mlp.graph.value_by_name("x").id
    s.set_spec(x, parse_spec("data+model?@p1,_"))
    s.set_spec(mlp.graph.values[8].id, parse_spec("_,model@p0"))
    s.update_view(frames=["main"], expanded={"main": ["layer1", "layer2"]}, zoom=1.5)
    return s


def test_every_field_survives_save_and_open(mlp, tmp_path):
    s = _edited(mlp)
    path = tmp_path / "s.json"
    s.save(path)

    t = Session()
    t.restore(read_state(path))
    t.set_program(mlp)
    assert t.source == s.source == "example:mlp"
    assert t.mesh == s.mesh and t.mesh.device_order == (7, 6, 5, 4, 3, 2, 1, 0)
    assert dict(t.specs) == dict(s.specs)
    assert dict(t.view) == dict(s.view)
    assert t.to_json() == s.to_json()
    t.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_saved_file_is_indented_json_in_field_order(mlp, tmp_path):
    s = _edited(mlp)
    path = tmp_path / "s.json"
    s.save(path)
    data = json.loads(path.read_text())
    assert list(data) == ["format", "version", "source", "mesh", "specs", "view", "program"]
    assert data["format"] == "shardscope-session" and data["version"] == FORMAT_VERSION == 2
    assert data["program"]["mlir"] == mlp.mlir_text and data["program"]["kind"] == "example"
    assert len(data["specs"]) == len(s.specs) > 1
    assert all(
        list(e)
        == (["value", "name", "spec"] if e["name"] else ["value", "name", "spec", "display"])
        for e in data["specs"]
    )
    assert any(e["name"] is None for e in data["specs"])
    assert path.read_text() == json.dumps(s.to_json(), indent=1)


def test_restored_state_waits_for_its_program(mlp, tmp_path):
    s = _edited(mlp)
    saved = s.to_json()
    t = Session()
    t.restore(saved)
    # before the program arrives, saving again writes the entries as they were read
    assert t.to_json()["specs"] == saved["specs"]
    assert t.mesh is None and not t.specs
    t.set_program(mlp)
    assert dict(t.specs) == dict(s.specs)


def test_specs_are_matched_by_name_then_id(mlp):
    graph = mlp.graph
    x = graph.value_by_name("x")
    state = Session().to_json()
    state["specs"] = [
        {"value": 999_999, "name": "x", "spec": "data"},  # a stale id: the name wins
        {"value": 8, "name": None, "spec": [None, "model"]},  # JSON entries are read too
        {"value": 999_999, "name": "no such name", "spec": "model"},  # neither: dropped
    ]
    default = Mesh((MeshAxis("data", 4), MeshAxis("model", 2)))
    mesh, specs, view = unpack_state(state, graph, default)
    assert mesh == default and view == {}
    assert specs == {x.id: Spec.of("data"), 8: Spec.of(None, "model")}


def test_an_intermediate_is_found_by_its_display_name_when_ids_moved(mlp):
    graph = mlp.graph
    value = graph.values[8]
    entry = {"value": 5, "name": None, "spec": "data,_", "display": value.display_name}
    state = {**Session().to_json(), "specs": [entry]}
    default = Mesh((MeshAxis("data", 4), MeshAxis("model", 2)))
    assert unpack_state(state, graph, default).specs == {8: Spec.of("data", None)}
    gone = {**entry, "display": "no such tensor"}
    assert unpack_state({**state, "specs": [gone]}, graph, default).specs == {}
    with pytest.raises(ShardscopeError, match="'no such tensor' names no tensor of its program"):
        unpack_state({**state, "specs": [gone], "program": {}}, graph, default)


def test_build_state_before_any_program():
    state = build_state(source=None, mesh=None, specs={}, view={}, graph=None)
    assert state == {
        "format": "shardscope-session",
        "version": 2,
        "source": None,
        "mesh": None,
        "specs": [],
        "view": {},
        "program": None,
    }


def test_bad_session_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ShardscopeError, match="not JSON"):
        Session.read(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ShardscopeError, match="not a shardscope session"):
        Session.read(bad)


def test_unreadable_or_sourceless_session_file(tmp_path):
    with pytest.raises(ShardscopeError, match="cannot read session"):
        read_state(tmp_path / "missing.json")
    path = tmp_path / "nosource.json"
    path.write_text(json.dumps({"format": "shardscope-session", "version": 1, "source": ""}))
    with pytest.raises(ShardscopeError, match="names no program source"):
        read_state(path)


def test_atomic_write_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "deep" / "s.json"
    write_json(path, {"a": 1})
    write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.json"]


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "s.json"
    write_json(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json(path, {"a": object()})
    assert json.loads(path.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_state_dir_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "mine"
    first, second = new_recovery_path(), new_recovery_path()
    assert first.parent == tmp_path / "mine"
    assert first != second
    assert first.name.startswith(f"recovery-{os.getpid()}-")
    monkeypatch.delenv("SHARDSCOPE_STATE_DIR")
    assert state_dir() == tmp_path / "xdg" / "shardscope"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "shardscope"


def test_read_recovery_ignores_missing_and_refuses_bad_files(tmp_path):
    path = tmp_path / "recovery-1-1.json"
    assert read_recovery(path) is None
    path.write_text("{not json")
    with pytest.raises(ShardscopeError, match="not JSON"):
        read_recovery(path)
    state = {"format": "shardscope-session", "version": 1, "source": "example:mlp"}
    write_json(path, state)
    assert read_recovery(path) == state


def test_edits_write_the_recovery_file_and_clean_exit_removes_it(mlp, tmp_path):
    recovery = tmp_path / "state" / "recovery.json"
    s = Session(recovery=recovery)
    assert not recovery.exists()
    s.set_program(mlp)
    x = mlp.graph.value_by_name("x").id
    s.set_spec(x, Spec.of(None, "model"))
    assert read_recovery(recovery) == s.to_json()
    s.discard_recovery()
    assert not recovery.exists()
    s.discard_recovery()


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


def test_saving_through_a_symlink_keeps_the_link_and_the_mode(tmp_path):
    target = tmp_path / "real" / "s.json"
    write_json(target, {"a": 1})
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_json(link, {"a": 2})
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text()) == {"a": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_new_file_gets_the_usual_mode(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "new.json"
        write_json(path, {"a": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_temporary_files_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "s.json"
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    stale = tmp_path / f".shardscope-tmp-{child.pid}-abc123-s.json"
    stale.write_text("half")
    running = tmp_path / f".shardscope-tmp-{os.getpid()}-xyz789-s.json"
    running.write_text("being written")
    other = tmp_path / ".not-ours.tmp"
    other.write_text("x")
    old_style = tmp_path / "s.jsonab_12xyz.tmp"  # named as saves before pids in names did
    old_style.write_text("half")
    os.utime(old_style, (1000, 1000))
    recent_old_style = tmp_path / "s.jsonzz_34xyz.tmp"
    recent_old_style.write_text("maybe being written")
    write_json(path, {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["s.json", running.name, other.name, recent_old_style.name]
    )


def test_a_save_killed_mid_write_leaves_a_temporary_file_the_next_save_removes(tmp_path):
    path = tmp_path / "s.json"
    script = textwrap.dedent(
        f"""
        import json, os, signal
        from shardscope.backend.session import persistence

        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)

        persistence.json.dump = die
        persistence.write_json(persistence.Path({str(path)!r}), {{"a": 1}})
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert [p.name.startswith(".shardscope-tmp-") for p in tmp_path.iterdir()] == [True]
    write_json(path, {"a": 2})
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_orphan_recoveries_are_those_of_exited_processes_newest_first(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    older = tmp_path / f"recovery-{child.pid}-1.json"
    newer = tmp_path / f"recovery-{child.pid}-2.json"
    legacy = tmp_path / "recovery.json"
    for i, p in enumerate((legacy, older, newer)):
        p.write_text("{}")
        os.utime(p, (1000 + i, 1000 + i))
    (tmp_path / f"recovery-{os.getpid()}-1.json").write_text("{}")  # a running window's
    (tmp_path / "settings.json").write_text("{}")
    assert orphan_recoveries() == [newer, older, legacy]


SESSION_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
SPEC_ENTRY = st.fixed_dictionaries(
    {"value": st.integers(-2, 40) | st.none() | st.text(max_size=3)},
    optional={
        "name": st.sampled_from(["x", "no such", None, 3]),
        "spec": st.sampled_from(["data", "model,_", "data,model,_,_", "pipe", "", 5, None])
        | st.lists(st.none() | st.sampled_from(["data", "model", "zz"]), max_size=4),
    },
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    extra=st.dictionaries(
        st.sampled_from(
            ["format", "version", "source", "mesh", "specs", "view", "file", "program"]
        ),
        SESSION_JSON,
        max_size=3,
    ),
    specs=st.lists(SPEC_ENTRY, max_size=3),
)
def test_fuzzed_session_files_open_or_fail_in_one_line(mlp, tmp_path, extra, specs):
    data = {
        "format": "shardscope-session",
        "version": 1,
        "source": "example:mlp",
        "mesh": {"axes": [{"name": "data", "size": 4}, {"name": "model", "size": 2}]},
        "specs": specs,
        "view": {},
        **extra,
    }
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(data))
    try:
        state = read_state(path)
        Session.check_state(mlp, state)
    except ShardscopeError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    session = Session()
    session.set_program(mlp, state=state)


@pytest.mark.parametrize(
    "key", ["main", "main/op4.r0", "f/op-1.r2", "main/opX", "a/op1.r", "a/op1.r2.r3", "a/op.r1", ""]
)
def test_view_frames_are_checked_as_the_graph_view_reads_them(tmp_path, key):
    from shardscope.backend.program.layout import Frame

    try:
        Frame.from_key(key)
        readable = True
    except ValueError:
        readable = False
    path = tmp_path / "s.json"
    state = {"format": "shardscope-session", "version": 1, "source": "example:mlp"}
    path.write_text(json.dumps({**state, "view": {"frames": [key]}}))
    if readable:
        read_state(path)
    else:
        with pytest.raises(ShardscopeError, match="view frame"):
            read_state(path)


def test_recovery_files_are_private_from_the_start(mlp, tmp_path, monkeypatch):
    import os
    import stat

    from shardscope.backend.session import persistence

    def no_fchmod(fd, mode):
        raise AssertionError(f"a recovery file was made with another mode, then chmod-ed {mode:o}")

    old = os.umask(0o022)
    try:
        monkeypatch.setattr(persistence.os, "fchmod", no_fchmod)
        recovery = tmp_path / "state" / "shardscope" / "recovery-1-1.json"
        s = Session(recovery=recovery)
        s.set_program(mlp)
        s.set_spec(mlp.graph.value_by_name("x").id, Spec.of(None, "model"))
        assert read_recovery(recovery) == s.to_json()
        assert stat.S_IMODE(recovery.stat().st_mode) == 0o600
        assert stat.S_IMODE(recovery.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(recovery.parent.parent.stat().st_mode) == 0o755
        monkeypatch.undo()
        # a session file saved by the user keeps the usual mode
        saved = tmp_path / "saved.json"
        s.save(saved)
        assert stat.S_IMODE(saved.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_hosts_are_saved_and_read_back_and_old_files_are_one_host(mlp, tmp_path):
    s = Session()
    s.set_program(mlp)
    stack = CommandStack(s)
    stack.push(SetHosts(2))
    stack.push(SetDcn("model", 2))
    path = tmp_path / "hosts.json"
    s.save(path)
    data = json.loads(path.read_text())
    assert data["hosts"] == {"count": 4, "dcn": {"data": 2, "model": 2}}
    t = Session()
    t.restore(read_state(path))
    assert t.to_json()["hosts"] == data["hosts"]  # kept while its program loads
    t.set_program(mlp)
    assert t.hosts == s.hosts == HostLayout(4, (("data", 2), ("model", 2)))
    assert t.mesh == s.mesh and not t.mesh.is_iota
    # a file without hosts, as every file before them: one host
    old = {k: v for k, v in data.items() if k != "hosts"}
    u = Session()
    u.set_program(mlp, state=old)
    assert u.hosts == HostLayout() and "hosts" not in u.to_json()


@pytest.mark.parametrize(
    "hosts, words",
    [
        ({"count": 3}, "do not split evenly among 3 hosts"),
        ({"count": 2, "dcn": {"data": 1, "model": 2}}, "not the DCN layout"),
        ("two", "not an object"),
    ],
)
def test_a_bad_hosts_entry_is_refused_when_opened(mlp, tmp_path, hosts, words):
    s = Session()
    s.set_program(mlp)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**s.to_json(), "hosts": hosts}))
    with pytest.raises(ShardscopeError) as caught:
        read_state(path)
    assert "has a bad hosts entry" in str(caught.value) and words in str(caught.value)
