"""Mesh axes dragged onto the graph's badges: the dimension under the mouse is marked and
a drop on it is announced (replace, or append with Shift), never applied by the view."""

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDragMoveEvent
from PySide6.QtWidgets import QToolTip

from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.mime import axis_mime_data
from tests.support.qt_events import drop

SHIFT = Qt.KeyboardModifier.ShiftModifier


def drag_move(view, pos, mime, modifiers=Qt.KeyboardModifier.NoModifier):
    """Deliver a drag of ``mime`` moving over viewport position ``pos``."""
    event = QDragMoveEvent(
        QPoint(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, modifiers
    )
    view.dragMoveEvent(event)
    return event


def badge_of(session, view, name):
    value = session.graph.value_by_name(name).id
    badge = view.badge_for(value)
    view.centerOn(badge)
    return value, badge


def chip(view, badge, dim):
    return view.mapFromScene(badge.chip_scene_center(dim))


def test_drops_emit_intents_only(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    x = session.graph.value_by_name("x").id
    badge = view.badge_for(x)
    view.centerOn(badge)
    mime = axis_mime_data("model")
    with qtbot.waitSignal(view.specDropped) as blocker:
        drop(view, view.mapFromScene(badge.chip_scene_center(1)), mime)
    assert blocker.args == [x, 1, "model"]
    assert session.spec(x) == Spec.of("data", None)  # the view never edits the session

    with qtbot.waitSignal(view.dropRejected):
        drop(view, view.viewport().rect().topLeft(), mime)
    other = QMimeData()
    other.setText("model")
    with qtbot.assertNotEmitted(view.specDropped):
        drop(view, view.mapFromScene(badge.chip_scene_center(0)), other)


def test_shift_appends_the_axis_and_replicated_always_replaces(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    x, badge = badge_of(session, view, "x")
    mime = axis_mime_data("model")
    with qtbot.assertNotEmitted(view.specDropped), qtbot.waitSignal(view.axisAppended) as got:
        event = drop(view, chip(view, badge, 0), mime, SHIFT)
    assert got.args == [x, 0, "model"] and event.isAccepted()
    replicated = axis_mime_data(None)
    with qtbot.assertNotEmitted(view.axisAppended), qtbot.waitSignal(view.specDropped) as got:
        drop(view, chip(view, badge, 0), replicated, SHIFT)
    assert got.args == [x, 0, None]
    assert session.spec(x) == Spec.of("data", None)


def test_a_drop_a_few_pixels_off_the_badge_still_lands_on_it(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    x, badge = badge_of(session, view, "x")
    assert view.transform().m11() < 2  # 2 scene pixels are within the view's few
    below = QPointF(badge.chip_scene_center(1).x(), badge.sceneBoundingRect().bottom() + 2)
    point = view.mapFromScene(below)
    assert badge not in view.items(point)
    with qtbot.waitSignal(view.specDropped) as got:
        drop(view, point, axis_mime_data("model"))
    assert got.args == [x, 1, "model"]


def test_a_drag_marks_one_dimension_at_a_time_and_says_what_a_drop_does(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    x, badge = badge_of(session, view, "x")
    mime = axis_mime_data("model")
    enter = QDragEnterEvent(
        chip(view, badge, 0),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.dragEnterEvent(enter)
    assert enter.isAccepted()
    assert drag_move(view, chip(view, badge, 0), mime).isAccepted()
    assert badge.hover_dim == 0
    assert QToolTip.text() == "replace data \u2192 model (Shift: append)"
    drag_move(view, chip(view, badge, 1), mime)
    assert badge.hover_dim == 1
    # dim 1 holds no axis: nothing to replace, no hint (Qt hides it on a short timer)
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    drag_move(view, chip(view, badge, 0), mime, SHIFT)
    assert QToolTip.text() == "append model \u2192 data+model"
    off = drag_move(view, view.viewport().rect().topLeft(), mime)
    assert not off.isAccepted() and badge.hover_dim is None
    drag_move(view, chip(view, badge, 1), mime)
    view.dragLeaveEvent(QDragLeaveEvent())
    assert badge.hover_dim is None


def test_a_drag_of_anything_but_an_axis_is_refused_and_marks_nothing(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    _, badge = badge_of(session, view, "x")
    text = QMimeData()
    text.setText("model")
    enter = QDragEnterEvent(
        chip(view, badge, 0),
        Qt.DropAction.CopyAction,
        text,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.dragEnterEvent(enter)
    assert not enter.isAccepted()
    assert not drag_move(view, chip(view, badge, 0), text).isAccepted()
    assert badge.hover_dim is None
