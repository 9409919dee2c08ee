"""``render --view conflicts`` and ``render --gspmd``: pictures of the debugger's findings."""

import pytest
from PySide6.QtGui import QColor, QImage

from shardscope.app.cli.main import main
from shardscope.app.cli.render_debugger import conflicts_sheet, mark_graph
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.session.document import Session
from shardscope.viewers.debugger.conflicts import FactorTable
from shardscope.viewers.graph.markers import CONFLICT_COLOR, GSPMD_COLOR
from shardscope.viewers.graph.view import GraphView
from tests.support.compile_oracle import loaded, propagated


def colours(path) -> set[int]:
    img = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB32)
    return {img.pixel(x, y) & 0xFFFFFF for x in range(img.width()) for y in range(img.height())}


def rgb(name: str) -> int:
    return QColor(name).rgb() & 0xFFFFFF


def test_render_conflicts_draws_each_factor_table(tmp_path, qapp):
    out = tmp_path / "conflicts.png"
    assert main(["render", "example:matmul6", "--view", "conflicts", "--out", str(out)]) == 0
    image = QImage(str(out))
    assert image.width() == 1200 and image.height() > 250
    assert rgb(CONFLICT_COLOR) in colours(out)  # the losers' outcome


def test_render_gspmd_marks_the_adds_result_in_purple(tmp_path, qapp):
    plain, marked = tmp_path / "plain.png", tmp_path / "gspmd.png"
    assert main(["render", "example:conflict", "--propagate", "--out", str(plain)]) == 0
    assert main(["render", "example:conflict", "--gspmd", "--out", str(marked)]) == 0
    assert rgb(GSPMD_COLOR) in colours(marked)
    assert rgb(GSPMD_COLOR) not in colours(plain)
    assert rgb(CONFLICT_COLOR) in colours(plain)


def test_gspmd_with_another_view_is_a_one_line_error(tmp_path, qapp, capsys):
    out = tmp_path / "m.png"
    assert main(["render", "example:conflict", "--view", "mesh", "--gspmd", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --gspmd marks the graph: use it with --view graph"]
    assert not out.exists()


def test_the_sheet_and_the_marks_need_a_result(qtbot):
    session = Session()
    session.set_program(loaded("example:conflict"))
    with pytest.raises(ShardscopeError, match="--view conflicts needs a propagation result"):
        conflicts_sheet(session, 800)
    view = GraphView(session)
    qtbot.addWidget(view)
    with pytest.raises(ShardscopeError, match="--gspmd needs a propagation result"):
        mark_graph(session, view, gspmd=True)
    session.set_propagation(propagated("example:conflict"))
    sheet = conflicts_sheet(session, 800)
    qtbot.addWidget(sheet)
    assert len(sheet.findChildren(FactorTable)) == 1
    markers = mark_graph(session, view, gspmd=False)
    assert markers.conflict_marks and not markers.gspmd_values()
    markers.close()


def test_a_torch_xla_capture_renders_gspmds_shardings_with_shardys_marked(tmp_path, qtbot):
    from shardscope.backend.program.load import load_program
    from shardscope.backend.propagation.propagate import propagate
    from shardscope.viewers.graph.pane import PaneMarks

    out = tmp_path / "torch.png"
    # without --gspmd: GSPMD partitions it, so its view is drawn (and marked purple)
    assert main(["render", "tests/inputs/torch/capture_conflict.json", "--out", str(out)]) == 0
    assert rgb(GSPMD_COLOR) in colours(out) and rgb(CONFLICT_COLOR) not in colours(out)
    program = load_program("tests/inputs/torch/capture_conflict.json")
    session = Session()
    session.set_program(program)
    session.set_propagation(propagate(program, session.mesh))
    view = GraphView(session)
    qtbot.addWidget(view)
    markers = mark_graph(session, view, gspmd=True)
    (marks,) = markers.findChildren(PaneMarks)
    ((value, (gspmd, shardy)),) = marks.differences.items()
    # the add's result: GSPMD keeps x's data sharding, Shardy replicates it
    assert session.graph.values[value].name == "result[0]"
    assert (gspmd, shardy) == ((("data",), ()), ((), ()))
    assert not markers.conflict_marks
    markers.close()
