"""The source view: the op's file scrolled to its line, the line highlighted, or why not."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextFormat

import shardscope.viewers.program.source_view as source_view_module
from shardscope.viewers.program.source_view import SourceView
from tests.support.paints import PaintLog, fresh, on_screen, wait_painted


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("".join(f"line_{i} = {i}\n" for i in range(1, 301)))
    return str(path)


@pytest.fixture
def view(qtbot):
    view = SourceView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def highlighted_line(view: SourceView) -> int:
    (selection,) = view.text.extraSelections()
    assert selection.format.property(QTextFormat.Property.FullWidthSelection) is True
    return selection.cursor.blockNumber() + 1


def line_is_visible(view: SourceView, line: int) -> bool:
    block = view.text.document().findBlockByLineNumber(line - 1)
    top = view.text.blockBoundingGeometry(block).translated(view.text.contentOffset()).top()
    return 0 <= top < view.text.viewport().height()


def test_the_line_is_highlighted_and_scrolled_into_view(view, source):
    view.show_location(source, 150, "stablehlo.add")
    assert view.header.text() == "model.py:150  —  stablehlo.add"
    assert view.header.toolTip() == source
    assert (view.path, view.line) == (source, 150)
    assert view.text.toPlainText().startswith("line_1 = 1\n")
    assert highlighted_line(view) == 150
    assert view.text.textCursor().blockNumber() == 149
    assert view.text.verticalScrollBar().value() > 0
    assert line_is_visible(view, 150) and not line_is_visible(view, 1)


def test_another_line_of_the_same_file_moves_the_highlight(view, source):
    view.show_location(source, 280)
    view.show_location(source, 3, "x")
    assert view.header.text() == "model.py:3  —  x"
    assert highlighted_line(view) == 3
    assert line_is_visible(view, 3)


def test_the_highlight_suits_the_palette(view, source):
    for base, expected in (("#1E1E1E", "#5A4A00"), ("#FFFFFF", "#FFF0A0")):
        palette = QPalette(view.palette())
        palette.setColor(QPalette.ColorRole.Base, QColor(base))
        view.setPalette(palette)
        view.show_location(source, 10)
        (selection,) = view.text.extraSelections()
        assert selection.format.background().color() == QColor(expected)


def test_no_location_says_so(view, source):
    view.show_location(source, 12)
    view.show_location(None, None, "stablehlo.constant")
    assert view.header.text() == "stablehlo.constant: no source location"
    assert view.text.toPlainText() == "" and (view.path, view.line) == (None, None)
    view.show_location("", 4)
    assert view.header.text() == "No source location"


def test_a_file_not_here_is_named_with_its_line(view, tmp_path):
    missing = str(tmp_path / "gone.py")
    view.show_location(missing, 7, "stablehlo.add")
    assert view.header.text() == f"{missing}:7 (file not readable here)"
    assert view.text.toPlainText() == "" and view.path is None


def test_a_huge_file_is_not_read(view, source, monkeypatch):
    monkeypatch.setattr(source_view_module, "MAX_BYTES", 100)
    view.show_location(source, 7)
    assert view.header.text().endswith("(file not readable here)")
    assert view.text.toPlainText() == ""


def test_a_location_in_a_pipe_or_device_is_not_read(view, tmp_path):
    import os

    fifo = tmp_path / "train.py"
    os.mkfifo(fifo)  # no writer: a plain read would wait forever
    for path in (str(fifo), "/dev/zero"):
        view.show_location(path, 7, "stablehlo.add")
        assert view.header.text() == f"{path}:7 (file not readable here)"
        assert view.text.toPlainText() == ""


def test_a_location_without_a_line_shows_the_file_alone(view, source, tmp_path):
    view.show_location(source, None, "stablehlo.add")
    assert view.header.text() == "model.py  —  stablehlo.add"
    assert view.text.toPlainText().startswith("line_1 = 1\n")
    assert view.text.extraSelections() == []
    missing = str(tmp_path / "gone.py")
    view.show_location(missing, None)
    assert view.header.text() == f"{missing} (file not readable here)"


def test_an_argument_shows_its_parameter_line_not_the_last_ops(view, tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(
        "import jax\n\n\ndef step(\n    params,\n    x,\n):\n    return x\n\n\nPROGRAM = step\n"
    )
    view.show_location(str(path), 8, "stablehlo.add")
    assert highlighted_line(view) == 8
    assert view.show_argument(str(path), "params['layers'][10]['w']")
    assert highlighted_line(view) == 5
    assert (
        view.header.text() == "prog.py:5  —  argument params['layers'][10]['w'], parameter of step"
    )
    assert view.show_argument(str(path), "result[0]")  # not a parameter: the def line
    assert highlighted_line(view) == 4
    # a captured function: the one defined at the line the capture recorded
    assert view.show_argument(str(path), "x", def_line=4)
    assert highlighted_line(view) == 6
    assert view.header.text() == "prog.py:6  —  argument x, parameter of step"
    assert not view.show_argument(str(path), "x", def_line=8)
    assert view.text.extraSelections() == []
    assert view.header.text() == "argument x: prog.py defines no function at line 8"


def test_an_argument_without_a_line_clears_the_highlight_and_says_why(view, source, tmp_path):
    view.show_location(source, 150, "stablehlo.add")
    assert not view.show_argument(str(tmp_path / "m.mlir"), "x")
    assert view.text.extraSelections() == []
    assert view.header.text() == (
        "argument x: the program did not come from a Python file: its arguments have no line"
    )
    view.show_location(source, 150, "stablehlo.add")
    assert not view.show_argument(source, "x")  # a file with no PROGRAM
    assert view.text.extraSelections() == []
    assert "names no PROGRAM function" in view.header.text()
    assert not view.show_argument(str(tmp_path / "gone.py"), "x")
    assert view.header.text() == "argument x: its file is not readable here"
    view.show_location(source, 150, "stablehlo.add")
    assert not view.show_argument(source, "x", "relu")
    assert view.text.extraSelections() == []
    assert view.header.text() == "argument x of relu: a called function's argument has no line"


def _click_tensor_row(qtbot, window, name):
    outline = window.outline
    outline.tabs.setCurrentIndex(1)
    model = outline.proxy
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == name)
    index = model.index(row, 0)
    outline.table.scrollTo(index)
    rect = outline.table.visualRect(index)
    qtbot.mouseClick(outline.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_in_the_window_clicking_an_argument_moves_the_source_off_the_last_op(
    qtbot, monkeypatch, tmp_path
):
    from shardscope.app.window.main_window import MainWindow

    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "settings.ini"))

    window = MainWindow(auto_propagate=False)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.open_program("example:mlp")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    source = window.source_view
    # before any selection: the file where the program's ops begin, nothing marked
    program = window.session.program
    first = next(op for op in program.graph.ops if op.source_file == program.path)
    qtbot.waitUntil(lambda: source.path == first.source_file)
    assert source.line is None
    assert source.text.extraSelections() == []
    assert source.header.text() == "mlp.py  —  select an op or a tensor to see its line"
    assert line_is_visible(source, first.source_line)
    _click_tensor_row(qtbot, window, "result[0]")
    op_line = source.line
    # the start is shown a turn of the event loop after the program: a line selected
    # before then stays
    window._show_program_start(program)
    assert source.line == op_line and source.text.extraSelections()
    assert op_line is not None and highlighted_line(source) == op_line
    _click_tensor_row(qtbot, window, "x")
    line = highlighted_line(source)
    assert line != op_line
    assert source.text.toPlainText().splitlines()[line - 1].startswith("def mlp(params, x)")
    assert source.header.text() == f"mlp.py:{line}  —  argument x, parameter of mlp"
    window.close()
    window.runner.wait(30_000)


def test_a_saved_session_shows_an_arguments_line_from_its_saved_source(
    qtbot, monkeypatch, tmp_path
):
    from shardscope.app.window.main_window import MainWindow

    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "settings.ini"))
    windows = []

    def open_window(run):
        window = MainWindow(auto_propagate=False)
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        run(window)
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        return window

    first = open_window(lambda w: w.open_program("example:mlp"))
    saved = tmp_path / "review.json"
    assert first.files.save_session_to(saved)
    review = open_window(lambda w: w.open_session(saved))
    assert review.session.program.from_session
    _click_tensor_row(qtbot, review, "x")
    source = review.source_view
    line = highlighted_line(source)
    assert source.text.toPlainText().splitlines()[line - 1].startswith("def mlp(params, x)")
    assert source.header.text() == (
        f"mlp.py:{line}  —  argument x, parameter of mlp  (as saved with the session)"
    )
    for window in windows:
        window.close()
        window.runner.wait(30_000)


def test_a_file_with_longer_lines_keeps_the_scroll_bars_and_repaints_once(qtbot, view, tmp_path):
    short = tmp_path / "short.py"
    short.write_text("".join(f"a_{i} = {i}\n" for i in range(1, 6)))
    wide = tmp_path / "wide.py"
    wide.write_text("".join(f"value_{i} = {'x' * 200}\n" for i in range(1, 400)))
    bars = (view.text.horizontalScrollBar(), view.text.verticalScrollBar())
    view.show_location(str(short), 2, "short lines")
    wait_painted(qtbot, view)
    # both bars are there with nothing to scroll: the next file's bars take their place
    assert all(bar.isVisible() for bar in bars)
    with PaintLog(view) as log:
        view.show_location(str(wide), 300, "long lines")
        wait_painted(qtbot, view)
    assert all(bar.isVisible() and bar.maximum() > 0 for bar in bars)
    widgets = [w for w, _ in log.events]
    twice = {type(w).__name__ for w in widgets if widgets.count(w) > 1}
    assert not twice, f"repainted twice: {twice}"
    assert highlighted_line(view) == 300
    assert on_screen(view) == fresh(view)


def test_the_start_of_a_file_not_readable_leaves_the_view_as_it_was(view, source, tmp_path):
    view.show_start(source, 120)
    assert view.header.text() == "model.py  —  select an op or a tensor to see its line"
    assert view.line is None and view.text.extraSelections() == []
    assert line_is_visible(view, 120)
    view.show_start(str(tmp_path / "gone.py"), 3)
    assert view.path == source and line_is_visible(view, 120)
