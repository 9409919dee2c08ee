"""Session, recovery and capture files whose module text MLIR cannot read (a lone
surrogate, a NUL character): one line in Messages naming the file; the window carries on."""

import json
import subprocess
import sys

import pytest

from shardscope.app.window.launch import start_window
from tests.app.window.test_files import answer_open, window_state
from tests.support.inputs import INPUTS

HOSTILE = INPUTS / "hostile"


def spoiled_session(window, spoil: str) -> str:
    """The JSON of ``window``'s session with ``spoil`` put into its saved module's text."""
    state = window.session.to_json()
    mlir = state["program"]["mlir"]
    state["program"]["mlir"] = mlir.replace("func.func", f"func.func{spoil}", 1)
    return json.dumps(state)


SPOILS = [("\udcff", "a lone surrogate \\udcff at line"), ("\x00", "a NUL character at line")]


@pytest.mark.parametrize(("spoil", "says"), SPOILS)
def test_opening_a_session_with_unreadable_module_text_is_one_line(
    make_window, qtbot, tmp_path, monkeypatch, pick, spoil, says
):
    window = make_window("example:mlp", propagate=False)
    bad = tmp_path / "bad.json"
    bad.write_text(spoiled_session(window, spoil))
    before = window_state(window)
    answer_open(monkeypatch, bad)
    pick(window, "&File", "Open &session…")
    qtbot.wait(200)
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert f"session {bad} has a program whose module text holds {says}" in error
    assert "open a file saved by File > Save" in error and "\n" not in error
    assert window_state(window) == before


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


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("capture_surrogate.json", "function 0 ('f') has module text with a lone surrogate"),
        ("capture_nul.json", "function 0 ('f') has module text with a NUL character"),
    ],
)
def test_opening_a_capture_with_unreadable_module_text_is_one_line(
    make_window, qtbot, monkeypatch, pick, name, says
):
    window = make_window("example:mlp", propagate=False)
    before = window_state(window)
    path = HOSTILE / name
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.wait(200)
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert error.startswith(f"{path}: {says}") and "\n" not in error
    assert "capture the script again" in error
    assert window_state(window) == before
