"""One dimension slot: its chips, axis drops and context-menu intents."""

from PySide6.QtCore import QMimeData, QPointF

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


def drop(slot, mime):
    return qt_events.drop(slot, QPointF(5, 5), mime)


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
