"""The recovery file of unsaved edits and the prompt on start that restores it."""

import subprocess
import sys

import pytest
from PySide6.QtWidgets import QMessageBox

from shardscope.app.window.launch import start_window
from shardscope.app.window.recovery import ask_restore
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from tests.support.file_menu import (
    SPOILS,
    marked_program,
    runs,
    spoiled_session,
)


def test_recovery_file_restores_edits(make_window, qtbot, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    recovery = window.session.recovery_file
    state = Session.read(recovery)
    assert {"value": x, "name": "x", "spec": "data,model"} in state["specs"]

    restored = make_window(None, propagate=False)
    restored.restore_state(state)
    qtbot.waitUntil(lambda: restored.session.program is not None, timeout=60_000)
    assert restored.session.spec(x) == Spec.of("data", "model")


def test_ask_restore_answers_from_the_environment(monkeypatch):
    state = {"source": "example:mlp", "specs": [{"value": 0, "name": "x", "spec": "data"}]}

    def no_dialog(*args, **kwargs):
        raise AssertionError("asked although the environment answered")

    monkeypatch.setattr(QMessageBox, "exec", no_dialog)
    for answer, restore in (("restore", True), ("yes", True), ("discard", False), ("NO", False)):
        monkeypatch.setenv("SHARDSCOPE_RECOVERY", answer)
        assert ask_restore(None, state) is restore


def test_ask_restore_asks_about_the_edits(monkeypatch, qtbot):
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "")
    shown = []

    def exec_(box):
        shown.append((box.windowTitle(), box.text()))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    state = {"source": "example:mlp", "specs": [{}, {}]}
    assert ask_restore(None, state) is False
    assert shown == [
        (
            "Restore unsaved session?",
            "shardscope did not exit cleanly while editing example:mlp (2 tensor specs). "
            "Restore those edits?",
        )
    ]


def test_the_recovery_file_exists_only_while_edits_are_unsaved(make_window, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    recovery = window.session.recovery_file
    assert not recovery.exists()  # nothing to recover right after loading
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert recovery.exists()
    window.qundo.undo()
    assert not recovery.exists()
    path = tmp_path / "mlp.json"
    drop_axis(window, x, 1, "model")
    assert window.files.save_session_to(path)
    assert not recovery.exists()
    drop_axis(window, x, 0, None)
    assert Session.read(recovery)["file"] == str(path)


def test_a_recovered_session_opens_from_its_saved_program(make_window, qtbot, tmp_path, drop_axis):
    program, marker = marked_program(tmp_path)
    window = make_window(program, propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 0, "data")
    state = Session.read(window.session.recovery_file)
    assert state["program"]["name"] == "marked"
    left = tmp_path / "recovery-left.json"
    left.write_text(window.session.recovery_file.read_text())
    restored = make_window(None, propagate=False)
    restored.files.restore_state(state, recovered_from=left)
    qtbot.waitUntil(lambda: restored.session.program is not None, timeout=60_000)
    assert runs(marker) == 1 and restored.session.spec(x) == Spec.of("data", None)
    assert not restored.qundo.isClean() and not left.exists()


@pytest.mark.parametrize(("spoil", "says"), SPOILS)
def test_a_recovery_file_with_unreadable_module_text_is_set_aside_at_start(
    make_window, qtbot, tmp_path, monkeypatch, spoil, says
):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "restore")
    text = spoiled_session(make_window("example:mlp", propagate=False), spoil)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    recovery = tmp_path / f"recovery-{gone.pid}-1.json"
    recovery.write_text(text)

    window = start_window("example:attention")
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        (error,) = window.messages.messages("error")
        assert f"session {recovery} has a program whose module text holds {says}" in error
        assert f"(recovery file set aside as {recovery.name}.bad)" in error
        assert "\n" not in error
        assert window.session.program.name == "attention"
        assert not recovery.exists() and (tmp_path / f"{recovery.name}.bad").exists()
    finally:
        window.close()
        window.runner.wait(30_000)
