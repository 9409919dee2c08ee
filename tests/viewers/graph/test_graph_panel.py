"""The graph's frame: breadcrumb and back button, the find box, export to PNG and SVG."""

import pytest
from PySide6.QtGui import QImage, QKeySequence, QTextDocument

from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session
from shardscope.viewers.graph.graph_panel import GraphPanel, export_view
from tests.support.inputs import write_input


def loop_of(session):
    return next(op for op in session.graph.ops if op.short_name == "while")


def back_action(panel):
    (action,) = [a for a in panel.actions() if a.shortcut() == QKeySequence("Alt+Left")]
    return action


def test_the_breadcrumb_follows_entering_a_region_and_a_callee(panel_for):
    session, panel = panel_for("example:scan")
    assert panel.crumbs.text() == "@main"
    assert not panel.back_button.isEnabled()
    assert panel.view.enter_op(loop_of(session).id, 1)
    assert panel.crumbs.text() == '<a href="0">@main</a> ▸ while body'
    assert panel.back_button.isEnabled()
    call = next(
        n for n in panel.view.layout_.nodes if n.kind == "op" and n.label.startswith("call @")
    )
    assert panel.view.enter_op(call.op)
    callee = session.graph.ops[call.op].callee
    assert panel.crumbs.text() == f'<a href="0">@main</a> ▸ <a href="1">while body</a> ▸ @{callee}'


def test_a_crumb_link_goes_back_to_its_frame(panel_for):
    session, panel = panel_for("example:scan")
    panel.view.enter_op(loop_of(session).id, 1)
    call = next(
        n for n in panel.view.layout_.nodes if n.kind == "op" and n.label.startswith("call @")
    )
    panel.view.enter_op(call.op)
    panel.crumbs.linkActivated.emit("1")
    assert len(panel.view.frames) == 2 and panel.crumbs.text().endswith("while body")
    panel.crumbs.linkActivated.emit("0")
    assert len(panel.view.frames) == 1 and panel.crumbs.text() == "@main"
    assert not panel.back_button.isEnabled()


def test_the_back_button_and_alt_left_leave_one_level(panel_for):
    session, panel = panel_for("example:scan")
    loop = loop_of(session)
    panel.view.enter_op(loop.id, 0)
    assert panel.crumbs.text().endswith("while cond")
    panel.back_button.click()
    assert panel.crumbs.text() == "@main"
    panel.view.enter_op(loop.id, 1)
    back_action(panel).trigger()
    assert panel.crumbs.text() == "@main" and not panel.back_button.isEnabled()


def test_a_new_program_resets_the_breadcrumb(panel_for):
    mlp, _ = panel_for("example:mlp")
    session, panel = panel_for("example:scan")
    panel.view.enter_op(loop_of(session).id, 1)
    session.set_program(mlp.program)
    assert panel.crumbs.text() == "@main" and not panel.back_button.isEnabled()


def test_the_find_box_says_when_nothing_matches(panel_for):
    session, panel = panel_for("example:mlp")
    panel.find_box.setText("no such op anywhere")
    panel.find_box.returnPressed.emit()
    assert panel.find_status.text() == "no match"
    panel.find_box.setText("dot_general")
    panel.find_box.returnPressed.emit()
    assert panel.find_status.text() == "2 ops"
    assert len(panel.view.scene().selectedItems()) == 1


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_export_writes_the_whole_frame_and_keeps_the_selection(panel_for, tmp_path, suffix):
    session, panel = panel_for("example:mlp")
    view = panel.view
    assert view.find("dot_general")
    selected = view.scene().selectedItems()
    cache_modes = [item.cacheMode() for item in view.scene().items()]
    path = tmp_path / f"graph.{suffix}"
    export_view(view, path, scale=2.0)
    assert view.scene().selectedItems() == selected
    assert [item.cacheMode() for item in view.scene().items()] == cache_modes
    if suffix == "png":
        image = QImage(str(path))
        rect = view.scene().sceneRect()
        assert (image.width(), image.height()) == (int(rect.width() * 2), int(rect.height() * 2))
    else:
        text = path.read_text()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "shardscope program graph" in text


def test_export_of_an_empty_view_says_what_to_do(qtbot, tmp_path):
    panel = GraphPanel(Session())
    qtbot.addWidget(panel)
    with pytest.raises(ValueError, match="open a program first"):
        export_view(panel.view, tmp_path / "graph.png")


def test_export_to_a_format_qt_cannot_write_names_the_fix(panel_for, tmp_path):
    session, panel = panel_for("example:mlp")
    with pytest.raises(OSError, match=r"use a \.png, \.jpg or \.svg name"):
        export_view(panel.view, tmp_path / "graph.nope")


def test_the_breadcrumb_shows_a_callee_named_with_markup_characters(qtbot, tmp_path):
    module = """module @m {
  func.func public @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = call @"a&amp;b<i>"(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
  func.func private @"a&amp;b<i>"(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
"""
    session = Session()
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    session.set_program(load_program(write_input(tmp_path, "amp.mlir", module)))
    call = next(op for op in session.graph.ops if op.short_name == "call")
    assert panel.view.enter_op(call.id)
    doc = QTextDocument()
    doc.setHtml(panel.crumbs.text())
    assert doc.toPlainText() == "@main ▸ @a&amp;b<i>"
