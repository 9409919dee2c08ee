"""Save and Save as through the File menu, and the prompt before unsaved edits would be
lost."""

import json

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QInputDialog, QMessageBox

from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from tests.support.file_menu import (
    answer_open,
    answer_save,
    answer_unsaved,
    edited_mlp,
)


def test_save_and_open_session(make_window, qtbot, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    window.graph.collapse_all()
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    assert window.qundo.isClean()

    other = make_window(None, propagate=False)
    assert other.open_session(path)
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.spec(x) == Spec.of("data", "model")
    assert other.graph.expanded() == frozenset()
    assert str(path) in other.settings.recent()


def test_save_as_then_open_session_through_the_file_menu(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert window.windowTitle() == "mlp • — shardscope"
    path = tmp_path / "edited.json"
    asked = []
    answer_save(monkeypatch, path, asked)
    pick(window, "&File", "Save session &as…")
    assert asked == [("Save session", "session.json")]
    assert json.loads(path.read_text())["source"] == "example:mlp"
    assert window.windowTitle() == "mlp — shardscope"
    assert window.files.session_path == path
    assert f"saved session {path}" in window.messages.messages()

    # Save again: no dialog, the same file.
    drop_axis(window, x, 0, None)
    asked.clear()
    pick(window, "&File", "&Save session")
    assert asked == []
    assert {"value": x, "name": "x", "spec": "_,model"} in Session.read(path)["specs"]

    other = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(other, "&File", "Open &session…")
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.spec(x) == Spec.of(None, "model")
    assert other.windowTitle() == "mlp — shardscope"


def test_saving_over_a_pipe_says_so_keeps_it_and_the_edits(
    make_window, tmp_path, monkeypatch, pick, drop_axis
):
    import os
    import stat

    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    folder = tmp_path / "out"
    folder.mkdir()
    fifo = folder / "session.json"
    os.mkfifo(fifo)
    answer_save(monkeypatch, fifo)
    pick(window, "&File", "Save session &as…")
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "\n" not in errors[0]
    assert "is a pipe (FIFO), not a regular file" in errors[0] and str(fifo) in errors[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(folder) == ["session.json"]
    assert window.windowTitle() == "mlp • — shardscope"  # still unsaved
    assert window.files.session_path != fifo


def test_first_save_asks_for_a_file_and_cancel_saves_nothing(
    make_window, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    asked = []
    answer_save(monkeypatch, "", asked)  # the user cancels
    pick(window, "&File", "&Save session")
    assert asked == [("Save session", "session.json")]
    assert window.files.session_path is None
    assert not list(tmp_path.glob("*.json"))


def test_save_with_nothing_open_says_so(make_window, tmp_path, monkeypatch, pick):
    window = make_window(None, propagate=False)
    answer_save(monkeypatch, tmp_path / "empty.json")
    pick(window, "&File", "&Save session")
    assert "nothing to save: open a program first" in window.messages.messages("error")
    assert not (tmp_path / "empty.json").exists()


def test_opening_a_program_over_unsaved_edits_asks_and_cancel_keeps_them(
    make_window, qtbot, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    asked = answer_unsaved(monkeypatch, QMessageBox.StandardButton.Cancel)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("attention", True))
    pick(window, "&File", "Open &example…")
    assert asked == [
        (
            "Unsaved edits",
            "mlp has edits that are not saved. Save them before opening example:attention?",
        )
    ]
    qtbot.wait(200)
    assert window.files.loading is None
    assert window.session.program.name == "mlp"
    assert window.session.spec(x) == Spec.of("data", "model")
    assert window.qundo.count() == 1 and window.windowTitle() == "mlp • — shardscope"


def test_opening_a_session_over_unsaved_edits_can_save_them_first(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    other = tmp_path / "other.json"
    assert window.files.save_session_to(other)
    drop_axis(window, x, 0, None)
    answer_unsaved(monkeypatch, QMessageBox.StandardButton.Save)
    answer_open(monkeypatch, other)
    pick(window, "&File", "Open &session…")
    # Save wrote the edit (dim 0 made replicated) to the session file before opening it
    assert {"value": x, "name": "x", "spec": "_,model"} in Session.read(other)["specs"]
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    assert window.qundo.isClean() and window.files.session_path == other


def test_opening_a_program_after_a_session_does_not_save_over_the_session(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    saved = path.read_text()
    window.open_program("example:attention")
    qtbot.waitUntil(lambda: window.session.program.name == "attention", timeout=60_000)
    asked = []
    answer_save(monkeypatch, "", asked)
    pick(window, "&File", "&Save session")
    assert asked, "Save did not ask for a file for the new program"
    assert path.read_text() == saved


def test_a_session_with_hosts_saves_and_reopens_laid_out_as_it_was(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    editor = window.mesh_editor
    editor.hosts_spin.setValue(2)
    editor.factor_spin(1).setValue(2)  # model across hosts: 4 hosts, DCN data=2,model=2
    layout, mesh = window.session.hosts, window.session.mesh
    assert layout.count == 4 and not mesh.is_iota
    path = tmp_path / "hosts.json"
    answer_save(monkeypatch, path)
    pick(window, "&File", "Save session &as…")
    assert json.loads(path.read_text())["hosts"] == layout.to_json()

    other = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(other, "&File", "Open &session…")
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.hosts == layout and other.session.mesh == mesh
    shown = other.mesh_editor
    assert shown.hosts_spin.value() == 4
    assert [shown.link_text(r) for r in range(2)] == ["both", "DCN"]
    assert shown.grid.boundaries() == window.mesh_editor.grid.boundaries() != []


def _press_in_prompt(qtbot, key, modifier, seen):
    """When the unsaved-edits prompt shows: note its text and buttons (as shown, the
    mnemonic's ``&`` dropped) in ``seen``, then press ``key`` with ``modifier`` on it. A
    mnemonic clicks its button a moment later (Qt animates the click); a prompt the key
    left open is noted as ``still open`` and cancelled, seconds later, so the test ends."""

    def answer():
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox) or not box.isActiveWindow():
            if isinstance(box, QMessageBox):
                box.activateWindow()  # as the window manager does when a prompt shows
            QTimer.singleShot(20, answer)
            return
        shown = [b.text().replace("&", "") for b in box.buttons() if b.isVisible()]
        seen.append((box.windowTitle(), box.text(), sorted(shown)))
        qtbot.keyClick(box, key, modifier)
        QTimer.singleShot(10_000, box, lambda: give_up(box))

    def give_up(box):
        if box.isVisible():
            seen.append("still open")
            box.reject()

    QTimer.singleShot(20, answer)


def test_the_unsaved_prompt_saves_with_alt_s_and_discards_with_alt_d(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    path = tmp_path / "saved.json"
    answer_save(monkeypatch, path)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("attention", True))
    seen = []
    _press_in_prompt(qtbot, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier, seen)
    with monkeypatch.context() as asking:
        asking.delenv("SHARDSCOPE_UNSAVED")
        pick(window, "&File", "Open &example…")
    assert seen == [
        (
            "Unsaved edits",
            "mlp has edits that are not saved. Save them before opening example:attention?",
            ["Cancel", "Discard", "Save"],
        )
    ]
    # Alt+S saved the edit, then the example opened
    assert {"value": x, "name": "x", "spec": "data,model"} in Session.read(path)["specs"]
    qtbot.waitUntil(lambda: window.session.program.name == "attention", timeout=60_000)

    window, x = edited_mlp(make_window, drop_axis)
    seen = []
    _press_in_prompt(qtbot, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier, seen)
    with monkeypatch.context() as asking:
        asking.delenv("SHARDSCOPE_UNSAVED")
        pick(window, "&File", "Open &example…")
    assert len(seen) == 1 and "still open" not in seen
    qtbot.waitUntil(lambda: window.session.program.name == "attention", timeout=60_000)
    assert window.qundo.isClean() and window.files.session_path is None

    # Esc keeps the edits and the program
    window, x = edited_mlp(make_window, drop_axis)
    seen = []
    _press_in_prompt(qtbot, Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier, seen)
    with monkeypatch.context() as asking:
        asking.delenv("SHARDSCOPE_UNSAVED")
        pick(window, "&File", "Open &example…")
    assert len(seen) == 1 and "still open" not in seen
    assert window.files.loading is None and window.session.program.name == "mlp"
    assert window.session.spec(x) == Spec.of("data", "model")
