"""Opening programs, examples and captures as a user does, through the File menu with the
file dialogs answered by the test: the capture picker, captured functions with odd names,
and capture files whose module text MLIR cannot read."""

import pytest
from PySide6.QtWidgets import QInputDialog

from shardscope.app.window.launch import start_window
from shardscope.backend.program.capture_file import Capture, CapturedFunction, capture_source
from shardscope.backend.session.persistence import write_json
from tests.support.dialogs import answer_picker
from tests.support.file_menu import (
    answer_open,
    window_state,
)
from tests.support.inputs import INPUTS, MLIR, PROGRAMS


def test_open_program_through_the_file_menu(make_window, qtbot, monkeypatch, pick):
    window = make_window(None, propagate=False)
    assert window.windowTitle() == "no program — shardscope"
    source = PROGRAMS / "pytree.py"
    answer_open(monkeypatch, source)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert window.session.source == str(source)
    assert window.settings.recent()[0] == str(source)


def test_open_example_through_the_file_menu(make_window, qtbot, monkeypatch, pick):
    window = make_window(None, propagate=False)
    offered = []

    def get_item(parent, title, label, items, current, editable):
        offered.extend(items)
        return "attention", True

    monkeypatch.setattr(QInputDialog, "getItem", get_item)
    pick(window, "&File", "Open &example…")
    assert {"mlp", "attention"} <= set(offered)
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert window.session.source == "example:attention"
    assert window.windowTitle() == "attention — shardscope"


def capture_of_two(tmp_path):
    """A capture file holding example:mlp as ``mlp`` and example:conflict as ``conflict``."""
    from shardscope.backend.program.capture_file import Capture, CapturedFunction
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.persistence import write_json

    functions = []
    for name in ("mlp", "conflict"):
        program = load_program(f"example:{name}")
        ops = len(program.graph.ops)
        functions.append(
            CapturedFunction(
                name, f"jit_{name}", program.mlir_text, ops, program.mesh, None, None, 1
            )
        )
    path = tmp_path / "cap.json"
    write_json(path, Capture(["python", "t.py"], 8, "finished", functions).to_json())
    return path, functions


def test_opening_a_capture_lets_the_user_pick_a_function(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    path, functions = capture_of_two(tmp_path)
    offered = []
    answer_picker(qtbot, offered, row=1)
    window = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    by_size = sorted(functions, key=lambda f: -f.ops)
    mesh = " \u00d7 ".join(f"{a}={n}" for a, n in by_size[0].mesh.items())
    assert offered[0][0][0] == by_size[0].name
    assert offered[0][0][2].startswith(mesh) and offered[0][0][3:] == [str(by_size[0].ops), "1"]
    assert window.session.program.name == by_size[1].name
    assert window.session.program.source == f"{path}#{by_size[1].name}"
    assert window.session.program.kind == "capture"


def test_cancelling_the_capture_picker_changes_nothing(make_window, qtbot, tmp_path, monkeypatch):
    path, _ = capture_of_two(tmp_path)
    window = make_window("example:mlp", propagate=False)
    before = window_state(window)
    answer_picker(qtbot, [])  # Cancel
    assert not window.files.open_file(str(path))
    qtbot.wait(100)
    assert window_state(window) == before and window.files.loading is None


def test_a_corrupt_capture_is_one_line_in_messages(make_window, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "shardscope-capture", "version": 1, "functions": 7}')
    window = make_window(None, propagate=False)
    assert not window.files.open_file(str(bad))
    (error,) = window.messages.messages("error")
    assert "capture the script again" in error and "\n" not in error


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
    answer_picker(qtbot, offered, row=chosen)
    window = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert [row[0] for row in offered[0]] == [
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
    monkeypatch.setattr(
        "shardscope.app.window.files.pick_captured", lambda *a, **k: pytest.fail("asked again")
    )
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


HOSTILE = INPUTS / "hostile"


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
