"""File > Open recent: the files opened or saved last, by whole path, each reopening as
what it is; an entry whose file is gone says where to open it from."""

from shardscope.backend.program.capture_file import Capture, CapturedFunction
from shardscope.backend.program.load import load_program
from shardscope.backend.session.persistence import write_json


def test_recent_menu_lists_opened_files_and_reopens_them(make_window, qtbot, tmp_path, find_action):
    window = make_window("example:mlp", propagate=False)
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    recent = find_action(window, "&File", "Open &recent").menu()
    assert recent.isEnabled()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]

    fresh = make_window(None, propagate=False)
    recent = find_action(fresh, "&File", "Open &recent").menu()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.session.program is not None, timeout=60_000)
    assert fresh.files.session_path is None
    # the program reopened goes to the top of the list
    assert [a.text() for a in recent.actions()] == ["example:mlp", str(path)]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.files.loading is None, timeout=60_000)
    assert fresh.files.session_path == path
    assert fresh.settings.recent() == [str(path), "example:mlp"]


def test_recent_menu_is_disabled_when_empty(make_window, find_action):
    window = make_window(None, propagate=False)
    recent = find_action(window, "&File", "Open &recent")
    assert recent.menu().actions() == []
    assert not recent.isEnabled()


def _write_capture(folder):
    """A capture file holding the mlp example as function ``step``."""
    program = load_program("example:mlp")
    function = CapturedFunction(
        "step", "jit_step", program.mlir_text, len(program.graph.ops), program.mesh, None, 1, 1
    )
    path = folder / "cap.json"
    write_json(path, Capture(["python", "train.py"], 8, "finished", [function]).to_json())
    return path


def test_a_capture_opened_from_its_folder_reopens_from_a_window_started_elsewhere(
    make_window, qtbot, tmp_path, monkeypatch, find_action
):
    folder = tmp_path / "runs"
    folder.mkdir()
    path = _write_capture(folder)
    monkeypatch.chdir(folder)
    window = make_window("cap.json#step", propagate=False)
    recent = find_action(window, "&File", "Open &recent").menu()
    assert [a.text() for a in recent.actions()][0] == f"{path}#step"

    # a session saved by a name relative to the folder is listed by its whole path too
    assert window.files.save_session_to("saved.json")
    assert [a.text() for a in recent.actions()][:2] == [str(folder / "saved.json"), f"{path}#step"]

    monkeypatch.chdir(tmp_path)
    fresh = make_window(None, propagate=False)
    recent = find_action(fresh, "&File", "Open &recent").menu()
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.session.program is not None, timeout=60_000)
    assert fresh.session.program.name == "step"
    assert fresh.messages.messages("error") == []


def test_a_recent_entry_whose_file_is_gone_says_what_opens_captures_and_sessions(
    make_window, qtbot, tmp_path, find_action
):
    path = _write_capture(tmp_path)
    window = make_window(f"{path}#step", propagate=False)
    session = tmp_path / "saved.json"
    assert window.files.save_session_to(session)
    path.unlink()
    session.unlink()
    recent = find_action(window, "&File", "Open &recent").menu()
    before = window.session.program
    for entry, gone in ((1, path), (0, session)):
        recent.actions()[entry].trigger()
        error = window.messages.messages("error")[-1]
        assert error.startswith(f"{gone}: no such file (moved or deleted since it was opened)")
        assert "capture .json (FILE.json#NAME" in error and "Open session a saved session" in error
        assert "\n" not in error
    assert window.files.loading is None and window.session.program is before
