"""File dialogs open in the last folder used for their kind of file (programs, sessions,
exports), else where shardscope was started; driven through the real File menu and Qt's
own file dialog (the offscreen platform has no native one)."""

import shutil

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

import shardscope.app.window.file_dialogs as file_dialogs
from shardscope.app.window.file_dialogs import last_folder, remember_folder
from shardscope.app.window.settings import Settings
from tests.support.inputs import PROGRAMS


@pytest.fixture
def started_in(tmp_path, monkeypatch):
    """The folder shardscope was started from, for these tests."""
    start = tmp_path / "start"
    start.mkdir()
    monkeypatch.setattr(file_dialogs, "START_FOLDER", str(start))
    return start


def answer_dialog(qtbot, seen, *, pick=None):
    """When the next file dialog shows: note its folder and suggested name in ``seen``,
    then choose ``pick`` (a path) or, with None, Cancel."""

    def answer():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, answer)
            return
        names = dialog.selectedFiles()
        seen.append((dialog.windowTitle(), dialog.directory().absolutePath(), names))
        if pick is None:
            dialog.reject()
        else:
            # as a user does: go to the folder, type the name, press Enter
            dialog.setDirectory(str(pick.parent))
            edit = dialog.findChild(QLineEdit, "fileNameEdit")
            edit.selectAll()
            qtbot.keyClicks(edit, pick.name)
            qtbot.keyClick(edit, Qt.Key.Key_Return)

    QTimer.singleShot(20, answer)


def test_open_program_starts_where_shardscope_started_then_in_the_last_folder(
    make_window, qtbot, started_in, tmp_path, pick
):
    window = make_window(None, propagate=False)
    programs = tmp_path / "models"
    programs.mkdir()
    source = programs / "pytree.py"
    shutil.copy(PROGRAMS / "pytree.py", source)
    seen = []
    answer_dialog(qtbot, seen, pick=source)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert seen[0][:2] == ("Open program", str(started_in))
    assert window.session.source == str(source)

    answer_dialog(qtbot, seen)  # again, and Cancel: it opens where the program was
    pick(window, "&File", "&Open program…")
    assert seen[1][:2] == ("Open program", str(programs))
    assert window.session.source == str(source)
    # sessions keep a folder of their own: not the programs' one
    answer_dialog(qtbot, seen)
    pick(window, "&File", "Open &session…")
    assert seen[2][:2] == ("Open session", str(started_in))
    # a new window (the settings persist) opens programs where the last one was
    other = make_window(None, propagate=False)
    answer_dialog(qtbot, seen)
    pick(other, "&File", "&Open program…")
    assert seen[3][1] == str(programs)
    assert other.session.program is None  # Cancel opened nothing


def test_save_and_export_suggest_a_name_in_their_own_last_folders(
    make_window, qtbot, started_in, tmp_path, pick
):
    window = make_window("example:mlp", propagate=False)
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    seen = []
    answer_dialog(qtbot, seen, pick=reviews / "mlp_tp")  # no suffix typed: .json is added
    pick(window, "&File", "Save session &as…")
    assert seen[0][0] == "Save session"
    assert seen[0][1] == str(started_in)
    assert seen[0][2] == [str(started_in / "session.json")]
    assert (reviews / "mlp_tp.json").exists()
    assert window.files.session_path == reviews / "mlp_tp.json"

    pictures = tmp_path / "pictures"
    pictures.mkdir()
    answer_dialog(qtbot, seen, pick=pictures / "graph.png")
    pick(window, "&File", "Export view as &PNG…")
    assert seen[1][1] == str(started_in)  # exports had no folder yet
    assert (pictures / "graph.png").stat().st_size > 1000
    answer_dialog(qtbot, seen)
    pick(window, "&File", "Export view as S&VG…")
    assert seen[2][1] == str(pictures) and seen[2][2] == [str(pictures / "mlp.svg")]
    assert not (pictures / "mlp.svg").exists()  # cancelled
    answer_dialog(qtbot, seen)
    pick(window, "&File", "Save session &as…")
    assert seen[3][1] == str(reviews)


def test_a_folder_that_is_gone_falls_back_to_the_start_folder(started_in, tmp_path):
    settings = Settings(str(tmp_path / "s.ini"))
    assert last_folder(settings, "exports") == str(started_in)
    gone = tmp_path / "gone"
    gone.mkdir()
    remember_folder(settings, "exports", gone / "a.png")
    assert last_folder(settings, "exports") == str(gone)
    gone.rmdir()
    assert last_folder(settings, "exports") == str(started_in)
    with pytest.raises(ValueError, match="use one of programs, sessions, exports"):
        last_folder(settings, "pictures")
