"""Starting the GUI: no display says so in one line; recovery files of windows that did
not exit cleanly are offered (never a running window's), and a bad one cannot stop the
window from starting."""

import json
import os
import subprocess
import sys

import pytest

from shardscope.app.window.launch import run_gui, start_window
from shardscope.backend.session.persistence import state_dir
from shardscope.backend.sharding.spec import Spec


def test_no_display_returns_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    assert run_gui("example:mlp") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("no display:")
    assert "ssh -X" in err[0] and "render" in err[0]


def dead_pid() -> int:
    """The id of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def start(qtbot):
    """``start(source)``: the window ``shardscope gui source`` opens; closed at teardown."""
    windows = []

    def make(source="example:mlp"):
        window = start_window(source)
        qtbot.addWidget(window)
        windows.append(window)
        qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
        return window

    yield make
    for window in windows:
        window.close()
        window.runner.wait(30_000)


def crashed_edits(tmp_path, pid, **extra):
    """A recovery file left by a window of process ``pid``: x sharded on model, mesh 2x4."""
    state = {
        "format": "shardscope-session",
        "version": 1,
        "source": "example:mlp",
        "mesh": {"axes": [{"name": "data", "size": 2}, {"name": "model", "size": 4}]},
        "specs": [{"value": 4, "name": "x", "spec": "data,model"}],
        "view": {},
        **extra,
    }
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"recovery-{pid}-1.json"
    path.write_text(json.dumps(state))
    return path


def test_restored_edits_stay_unsaved_and_save_to_their_session_file(start, tmp_path, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "restore")
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "cancel")
    session_file = tmp_path / "mine.json"
    left = crashed_edits(tmp_path, dead_pid(), file=str(session_file))
    window = start("example:attention")
    assert window.session.program.name == "mlp"
    x = window.session.graph.value_by_name("x").id
    assert window.session.spec(x) == Spec.of("data", "model")
    assert window.session.mesh.describe() == "data=2,model=4"
    assert window.windowTitle() == "mlp • — shardscope"
    assert window.files.session_path == session_file
    # the rescued edits now live in this window's own recovery file, and only there
    assert not left.exists()
    assert json.loads(window.session.recovery_file.read_text())["file"] == str(session_file)
    # quitting asks (the answer here: cancel) instead of deleting the rescued edits
    window.close()
    assert window.isVisible() and window.session.recovery_file.exists()
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "save")
    window.close()
    assert not window.isVisible()
    assert json.loads(session_file.read_text())["specs"][-1]["spec"] == "data,model"


def test_the_restore_prompt_names_the_mesh_and_session_file(start, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "")
    shown = []

    def exec_(box):
        shown.append(box.text())
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    left = crashed_edits(tmp_path, dead_pid(), file="/x/mine.json")
    window = start("example:mlp")
    assert shown == [
        "shardscope did not exit cleanly while editing example:mlp (1 tensor spec, "
        "mesh data=2,model=4, session /x/mine.json). Restore those edits?"
    ]
    assert not left.exists()  # the user discarded it
    assert window.qundo.isClean()


def test_a_running_windows_recovery_file_is_not_offered(start, tmp_path, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "restore")
    live = crashed_edits(tmp_path, os.getpid())
    before = live.read_text()
    window = start("example:attention")
    assert window.session.program.name == "attention"
    assert live.read_text() == before


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not utf-8 \x80", b"[" * 100_000 + b"]" * 100_000, b"{not json"],
    ids=["not-utf8", "nested", "not-json"],
)
def test_a_bad_recovery_file_is_set_aside_and_the_window_starts(
    start, tmp_path, monkeypatch, content
):
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "restore")
    left = crashed_edits(tmp_path, dead_pid())
    left.write_bytes(content)
    window = start("example:mlp")
    assert window.session.program.name == "mlp"
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "\n" not in errors[0]
    assert f"set aside as {left.name}.bad" in errors[0]
    assert not left.exists() and left.with_name(left.name + ".bad").read_bytes() == content
