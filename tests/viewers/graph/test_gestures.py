"""What the mouse does on the graph: a double click enters an op's callee or region,
unfolds a folded scope or folds a region by its name; a right click offers the node's or
the frame's actions; the wheel zooms; a click selects a tensor or an op."""

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from shardscope.backend.program.layout import Frame
from shardscope.viewers.graph.gestures import background_menu, node_menu
from shardscope.viewers.graph.items import ScopeBoxItem

LEFT = Qt.MouseButton.LeftButton


def node(view, label):
    item = next(i for i in view.nodes if i.node.label == label)
    view.centerOn(item)
    return item


def at(view, item):
    return view.mapFromScene(item.sceneBoundingRect().center())


def test_node_menu_offers_regions_and_folds(panel_for):
    session, panel = panel_for("example:scan")
    view = panel.view
    loop = next(op for op in session.graph.ops if op.short_name == "while")
    item = view.nodes[view.layout_.node_of_op[loop.id]]
    texts = [a.text() for a in node_menu(view, item).actions()]
    assert "Enter cond" in texts and "Enter body" in texts
    next(a for a in node_menu(view, item).actions() if a.text() == "Enter cond").trigger()
    assert view.frame.region == 0


def test_double_clicking_a_region_name_folds_its_scope(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    region = next(i for i in view.scene().items() if isinstance(i, ScopeBoxItem))
    path = region.box.path
    point = view.mapFromScene(region.header_rect().center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert path not in view.expanded()
    assert any(n.kind == "scope" and n.scope == path for n in view.layout_.nodes)


def test_the_graphs_context_menu_expands_and_collapses_all(panel_for, qtbot):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    texts = [a.text() for a in background_menu(view).actions()]
    assert texts == ["Expand all scopes", "Collapse all scopes"]
    menu = node_menu(view, view.nodes[0])
    expand = next(a for a in menu.actions() if a.text() == "Expand all scopes")
    expand.trigger()
    assert not [n for n in view.layout_.nodes if n.kind == "scope"]
    fold = next(a for a in background_menu(view).actions() if a.text() == "Collapse all scopes")
    fold.trigger()
    assert view.expanded() == frozenset()


def test_a_node_menu_folds_each_scope_around_an_op_and_enters_its_callee(panel_for):
    _, panel = panel_for("example:mlp")
    view = panel.view
    texts = [a.text() for a in node_menu(view, node(view, "call @relu")).actions() if a.text()]
    assert texts == [
        "Enter @relu",
        "Fold layer1",
        "Expand all scopes",
        "Collapse all scopes",
    ]
    fold = next(
        a for a in node_menu(view, node(view, "add")).actions() if a.text() == "Fold layer1"
    )
    fold.trigger()
    assert "layer1" not in view.expanded() and "layer2" in view.expanded()
    unfold = node_menu(view, node(view, "layer1")).actions()[0]
    assert unfold.text() == "Expand layer1"
    unfold.trigger()
    assert "layer1" in view.expanded()


def test_double_clicking_a_call_enters_its_callee(panel_for, qtbot):
    _, panel = panel_for("example:mlp")
    view = panel.view
    qtbot.mouseDClick(view.viewport(), LEFT, pos=at(view, node(view, "call @relu")))
    assert view.frame == Frame("relu")
    assert any(i.node.label == "maximum" for i in view.nodes)


def test_double_clicking_a_folded_scope_unfolds_it(panel_for, qtbot):
    _, panel = panel_for("example:mlp")
    view = panel.view
    view.set_expanded("layer2", False)
    qtbot.mouseDClick(view.viewport(), LEFT, pos=at(view, node(view, "layer2")))
    assert "layer2" in view.expanded()
    assert not [i for i in view.nodes if i.node.kind == "scope"]


def test_double_clicking_the_background_changes_nothing(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    layout, frame = view.layout_, view.frame
    corner = view.viewport().rect().topLeft() + QPoint(2, 2)
    assert view.itemAt(corner) is None
    qtbot.mouseDClick(view.viewport(), LEFT, pos=corner)
    assert view.layout_ is layout and view.frame == frame


def wheel(view, degrees_eighths):
    pos = QPointF(view.viewport().rect().center())
    event = QWheelEvent(
        pos,
        QPointF(view.viewport().mapToGlobal(pos.toPoint())),
        QPoint(),
        QPoint(0, degrees_eighths),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), event)


def test_the_wheel_zooms_in_turning_away_and_out_turning_back(panel_for):
    _, panel = panel_for("example:mlp")
    view = panel.view
    scale = view.transform().m11()
    wheel(view, 120)
    zoomed = view.transform().m11()
    assert zoomed == pytest.approx(scale * 1.0015**120)
    wheel(view, -240)
    assert view.transform().m11() == pytest.approx(zoomed / 1.0015**240)


def test_clicking_a_badge_selects_its_tensor(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    x = session.graph.value_by_name("x").id
    badge = view.badge_for(x)
    view.centerOn(badge)
    with qtbot.waitSignal(view.valueSelected) as got:
        qtbot.mouseClick(view.viewport(), LEFT, pos=at(view, badge))
    assert got.args == [x]


def test_clicking_an_op_selects_it_and_its_first_result(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    item = node(view, "call @relu")
    op = session.graph.ops[item.node.op]
    with (
        qtbot.waitSignal(view.opSelected) as chosen,
        qtbot.waitSignal(view.valueSelected) as value,
    ):
        qtbot.mouseClick(view.viewport(), LEFT, pos=at(view, item))
    assert chosen.args == [op.id] and value.args == [op.results[0]]


def test_clicking_an_input_selects_its_tensor_and_no_op(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    item = node(view, "x")
    with (
        qtbot.assertNotEmitted(view.opSelected),
        qtbot.waitSignal(view.valueSelected) as value,
    ):
        qtbot.mouseClick(view.viewport(), LEFT, pos=at(view, item))
    assert value.args == [session.graph.value_by_name("x").id]
