"""One dimension slot: its chips, axis drops and context-menu intents."""

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDragMoveEvent
from PySide6.QtWidgets import QToolTip

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import DimSpec
from shardscope.viewers.common.mime import axis_mime_data
from shardscope.viewers.tensor.dim_slot import DimSlot
from tests.support import qt_events
from tests.support.paints import PaintLog, wait_painted

MESH = parse_mesh("data=4,model=2")


def make(qtbot, spec=None):
    slot = DimSlot(1, 32)
    qtbot.addWidget(slot)
    slot.set_dim_spec(spec if spec is not None else DimSpec(), MESH)
    return slot


def drop(slot, mime, modifiers=Qt.KeyboardModifier.NoModifier):
    return qt_events.drop(slot, QPointF(5, 5), mime, modifiers)


def test_chips_show_axes_and_openness(qtbot):
    assert make(qtbot)._chips() == [("replicated", None)]
    assert make(qtbot, DimSpec((), True))._chips() == [("?", None)]
    slot = make(qtbot, DimSpec(("data", "model"), True, 2))
    assert slot._chips() == [("data", "data"), ("model", "model"), ("?", None)]
    assert slot._header() == "dim 1 \u00b7 32 \u00b7 p2"


def test_drops_emit_the_dim_and_axis(qtbot):
    slot = make(qtbot)
    seen = []
    slot.dropped.connect(lambda *a: seen.append(a))
    assert drop(slot, axis_mime_data("model")).isAccepted()
    foreign = QMimeData()
    foreign.setText("model")
    assert not drop(slot, foreign).isAccepted()
    assert seen == [(1, "model")]


def test_shift_or_ctrl_appends_and_a_plain_drop_replaces(qtbot):
    slot = make(qtbot, DimSpec(("data",)))
    dropped, appended = [], []
    slot.dropped.connect(lambda *a: dropped.append(a))
    slot.appended.connect(lambda *a: appended.append(a))
    assert drop(slot, axis_mime_data("model")).isAccepted()
    assert drop(slot, axis_mime_data("model"), Qt.KeyboardModifier.ShiftModifier).isAccepted()
    drop(slot, axis_mime_data("model"), Qt.KeyboardModifier.ControlModifier)
    drop(slot, axis_mime_data(None), Qt.KeyboardModifier.ShiftModifier)  # replicated: clears
    assert dropped == [(1, "model"), (1, None)]
    assert appended == [(1, "model"), (1, "model")]
    assert "Shift or Ctrl" in slot.toolTip()


def test_a_tooltip_says_what_the_drag_over_it_would_do(qtbot):
    slot = make(qtbot, DimSpec(("data",)))
    slot.show()
    mime = axis_mime_data("model")
    plain_width = slot.sizeHint().width()

    def move(modifiers):
        event = QDragMoveEvent(
            QPoint(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, modifiers
        )
        slot.dragMoveEvent(event)
        return event

    assert move(Qt.KeyboardModifier.NoModifier).isAccepted()
    assert slot._drop_hint == "replace data \u2192 model (Shift: append)"
    assert QToolTip.isVisible() and QToolTip.text() == slot._drop_hint
    # the slot keeps its size: the inspector repaints only what changes
    assert slot.sizeHint().width() == plain_width
    move(Qt.KeyboardModifier.ShiftModifier)
    assert slot._drop_hint == "append model \u2192 data+model"
    assert QToolTip.text() == "append model \u2192 data+model"
    slot.dragLeaveEvent(None)
    assert slot._drop_hint == ""
    qtbot.waitUntil(lambda: not QToolTip.isVisible())  # Qt hides a tooltip on a short timer
    # an empty dim has nothing to replace: no hint
    empty = make(qtbot)
    empty.dragMoveEvent(
        QDragMoveEvent(
            QPoint(5, 5),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
    )
    assert empty._drop_hint == ""


def test_menu_emits_intents_without_bools(qtbot):
    slot = make(qtbot, DimSpec(("data",)))
    seen = []
    slot.menuAction.connect(lambda *a: seen.append(a))
    menu = slot.build_menu()
    actions = {a.text(): a for a in menu.actions()}
    assert actions["Closed"].isChecked()
    actions["Open (?)"].trigger()
    prio = {a.text(): a for a in actions["Priority"].menu().actions()}
    assert prio["none"].isChecked()
    prio["none"].trigger()
    assert seen == [(1, "open", None), (1, "priority", None)]


def test_a_new_size_or_spec_repaints_and_the_same_ones_do_not(qtbot):
    slot = make(qtbot, DimSpec(("data",)))
    slot.show()
    qtbot.waitExposed(slot)
    wait_painted(qtbot, slot)
    with PaintLog(slot) as log:
        slot.set_dim_spec(DimSpec(("data",)), MESH)
        slot.set_size(32)
        qtbot.wait(30)
    assert log.events == []
    with PaintLog(slot) as log:
        slot.set_size(64)
        qtbot.wait(30)
    assert log.events and slot.size == 64 and "64" in slot._header()
