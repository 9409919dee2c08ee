"""The capture picker: each captured function with its source line, mesh, op and call
counts, sized to show its title; Enter or a double-click opens, Cancel opens nothing."""

import pytest
from PySide6.QtCore import Qt

from shardscope.app.window.capture_picker import CapturePicker, mesh_words
from shardscope.backend.program.capture_file import Capture, CapturedFunction
from shardscope.backend.program.load import load_program
from shardscope.backend.session.persistence import write_json
from tests.support.dialogs import answer_picker, picker_rows
from tests.support.inputs import MLIR


@pytest.fixture(scope="module")
def capture_file(tmp_path_factory):
    """A capture of a training script: its step (the mlp example, jitted at line 58), its
    predict function (the conflict example, line 31) and a helper with no known line."""
    folder = tmp_path_factory.mktemp("capture")
    script = str(folder / "long_training_script_name.py")
    functions = []
    for name, example, line, calls in (
        ("predict", "conflict", 31, 1),
        ("train_step", "mlp", 58, 20),
    ):
        program = load_program(f"example:{example}")
        functions.append(
            CapturedFunction(
                name,
                f"jit_{name}",
                program.mlir_text,
                len(program.graph.ops),
                program.mesh,
                script,
                line,
                calls,
            )
        )
    plain = (MLIR / "plain.mlir").read_text()
    functions.append(CapturedFunction("helper", "jit_helper", plain, 3, None, None, None, None))
    path = folder / "capture-long_training_script_name.json"
    capture = Capture(["python", script, "--steps", "20"], 8, "finished", functions)
    write_json(path, capture.to_json())
    return path, capture


def test_it_lists_line_mesh_and_counts_largest_first_and_shows_its_title(qtbot, capture_file):
    path, capture = capture_file
    dialog = CapturePicker(str(path), capture)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    by_size = sorted(capture.functions, key=lambda f: -f.ops)
    assert [r[0] for r in picker_rows(dialog)] == [f.name for f in by_size]
    step = next(r for r in picker_rows(dialog) if r[0] == "train_step")
    assert step[1] == "long_training_script_name.py:58"
    assert step[2] == "data=4 \u00d7 model=2 (8 devices)"
    assert step[4] == "20"
    helper = next(r for r in picker_rows(dialog) if r[0] == "helper")
    assert helper[1:3] == ["unknown", "no mesh"] and helper[4] == "?"
    assert dialog.windowTitle() == f"Open captured function \u2014 {path.name}"
    # wide enough for the whole title and every column
    assert dialog.width() >= dialog.fontMetrics().horizontalAdvance(dialog.windowTitle())
    header = dialog.table.header()
    assert header.length() <= dialog.table.viewport().width()
    assert "python" in dialog.intro.text() and "3 functions" in dialog.intro.text()
    # a click on a header sorts by that column: the source lines, in order
    dialog.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    assert [r[1] for r in picker_rows(dialog)] == [
        "long_training_script_name.py:31",
        "long_training_script_name.py:58",
        "unknown",
    ]
    dialog.table.sortByColumn(3, Qt.SortOrder.AscendingOrder)  # ops as numbers
    assert [r[0] for r in picker_rows(dialog)] == [f.name for f in reversed(by_size)]


def test_enter_opens_the_row_and_double_click_too(qtbot, capture_file):
    path, capture = capture_file
    dialog = CapturePicker(str(path), capture)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.table.setFocus()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Down)
    second = dialog.table.topLevelItem(1).text(0)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Return)
    assert dialog.result() == dialog.DialogCode.Accepted
    assert dialog.chosen().name == second

    again = CapturePicker(str(path), capture)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    item = again.table.topLevelItem(2)
    rect = again.table.visualItemRect(item)
    # a real double-click: press and release, then the double-click's press
    qtbot.mouseClick(again.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert again.isVisible()  # one click only selects
    qtbot.mouseDClick(again.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert again.result() == again.DialogCode.Accepted
    assert again.chosen().name == item.text(0)


def test_mesh_words():
    assert mesh_words({"data": 2, "model": 4}) == "data=2 \u00d7 model=4 (8 devices)"
    assert mesh_words({"x": 1}) == "x=1 (1 device)"
    assert mesh_words(None) == mesh_words({}) == "no mesh"


def test_the_window_opens_the_function_picked_and_cancel_changes_nothing(
    make_window, qtbot, capture_file
):
    path, capture = capture_file
    window = make_window("example:attention", propagate=False)
    title = window.windowTitle()
    seen = []
    answer_picker(qtbot, seen)
    assert not window.files.open_file(str(path))
    assert window.windowTitle() == title and window.files.loading is None
    assert window.session.program.name == "attention"
    answer_picker(qtbot, seen, row=1)
    assert window.files.open_file(str(path))
    qtbot.waitUntil(lambda: window.session.program.name != "attention", timeout=60_000)
    assert window.session.program.name == seen[1][1][0]
    assert window.session.program.source == f"{path}#{seen[1][1][0]}"
