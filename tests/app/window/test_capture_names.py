"""Captured functions whose names hold ``#``, ``?``, ``.json`` or a newline, opened in the
window: through the capture picker, as ``gui CAP.json#NAME`` does, and from Open recent."""

import pytest
from PySide6.QtWidgets import QInputDialog

from shardscope.app.window.launch import start_window
from shardscope.backend.program.capture_file import Capture, CapturedFunction, capture_source
from shardscope.backend.session.persistence import write_json
from tests.app.window.test_files import answer_open
from tests.support.inputs import MLIR

NAMES = ["a#b c", "what?x=1", "two\nlines", "x.json"]
# What titles and messages call them: one line each.
SHOWN = ["a#b c", "what?x=1", "two%0Alines", "x.json"]


def capture_of_odd_names(tmp_path):
    """A capture file of ``plain.mlir`` under each of NAMES, the first the largest."""
    text = (MLIR / "plain.mlir").read_text()
    functions = [
        CapturedFunction(name, "jit_f", text, 10 - i, {"data": 8}, None, None, 1)
        for i, name in enumerate(NAMES)
    ]
    path = tmp_path / "odd caps.json"
    write_json(path, Capture(["python", "t.py"], 8, "finished", functions).to_json())
    return path


@pytest.mark.parametrize("chosen", range(len(NAMES)))
def test_the_capture_picker_opens_the_function_picked(
    make_window, qtbot, tmp_path, monkeypatch, pick, find_action, chosen
):
    path = capture_of_odd_names(tmp_path)
    offered = []

    def get_item(parent, title, label, items, current, editable):
        offered.extend(items)
        return items[chosen], True

    monkeypatch.setattr(QInputDialog, "getItem", get_item)
    window = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert [item.split("  (")[0] for item in offered] == [
        "a%23b c",
        "what%3Fx=1",
        "two%0Alines",
        "x.json",
    ]
    program = window.session.program
    assert program.name == SHOWN[chosen] and program.kind == "capture"
    assert program.source == capture_source(path, NAMES[chosen])
    assert not window.messages.messages("error")

    # Open recent reopens that function, not the capture's picker or a session.
    other = make_window(None, propagate=False)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: pytest.fail("asked again"))
    (recent,) = [a for a in other.files.recent_menu.actions() if a.text() == program.source]
    recent.trigger()
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.program.name == SHOWN[chosen]
    assert not other.messages.messages("error")


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("{path}#a#b c", "a#b c"),
        ("{path}#a%23b c", "a#b c"),
        ("{path}#x.json", "x.json"),
        ("{path}#two%0Alines", "two%0Alines"),
        ("{path}#what%3Fx=1", "what?x=1"),
    ],
)
def test_gui_of_a_capture_function_opens_it(qtbot, tmp_path, monkeypatch, source, name):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "state"))
    path = capture_of_odd_names(tmp_path)
    window = start_window(source.format(path=path))
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        assert window.session.program.name == name
        assert not window.messages.messages("error")
    finally:
        window.close()
        window.runner.wait(30_000)
