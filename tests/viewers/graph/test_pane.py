"""A side-by-side pane's pieces: the shardings a mode shows, its header, its marks."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.partitioners import JAX, Partitioners
from shardscope.viewers.graph.markers import GSPMD_COLOR, GspmdMarkItem
from shardscope.viewers.graph.pane import (
    MODES,
    PaneHeader,
    PaneMarks,
    as_dims,
    differing,
    dims_override,
)


def test_the_override_shows_the_modes_dims_and_keeps_the_users_own_marked():
    override = dims_override({1: as_dims([["data"], []]), 2: as_dims([[], []])})
    spec, origin = override(1, Spec.of(None, None), "propagated")
    assert spec == Spec.of("data", None) and origin == "propagated"
    assert override(1, Spec.of("model", None), "user") == (Spec.of("data", None), "user")
    assert override(2, Spec.of("data", None), "propagated") == (Spec.of(None, None), "none")
    theirs = Spec.of("model")
    assert override(3, theirs, "code") == (theirs, "code")  # not listed: as the session shows


def test_differing_lists_what_both_know_and_disagree_on():
    left = {1: (("data",), ()), 2: ((), ()), 3: (("model",),)}
    right = {1: ((), ()), 2: ((), ())}
    assert differing(left, right) == {1: ((("data",), ()), ((), ()))}


def test_the_header_offers_every_mode_and_tells_when_one_is_picked(qtbot):
    header = PaneHeader("Left")
    qtbot.addWidget(header)
    assert [header.combo.itemText(i) for i in range(header.combo.count())] == [
        name for _, name in MODES
    ]
    with qtbot.waitSignal(header.modeChanged) as picked:
        header.combo.setCurrentIndex(3)
    assert picked.args == ["gspmd"] and header.mode == "gspmd"
    header.set_note("compiling with GSPMD…")
    assert header.note.text() == "compiling with GSPMD…"


def test_a_long_note_is_cut_and_never_widens_the_header(qtbot):
    header = PaneHeader("Left")
    qtbot.addWidget(header)
    header.resize(300, 30)
    header.show()
    narrow = header.minimumSizeHint().width()
    note = ", ".join(["waiting for propagation: showing now"] * 4)
    header.set_note(note)
    assert header.minimumSizeHint().width() == narrow
    assert header.note.text() == note and header.note.toolTip().startswith(note)
    assert header.note.shown_text.endswith("…")


def test_the_header_names_the_programs_partitioners(qtbot):
    header = PaneHeader("Left")
    qtbot.addWidget(header)
    header.show()
    header.set_mode("gspmd")
    narrow = header.minimumSizeHint().width()
    header.set_names(Partitioners("torch_xla", "gspmd"))
    assert header.mode_texts() == [
        "Now",
        "Before the last edit",
        "Shardy (shardscope)",
        "GSPMD (torch_xla)",
    ]
    assert header.mode == "gspmd" and header.combo.currentText() == "GSPMD (torch_xla)"
    tip = header.combo.itemData(3, Qt.ItemDataRole.ToolTipRole)
    assert tip == "GSPMD (torch_xla's partitioner)"
    # the picker shows its whole text, and the header widens by a few px at most
    combo = header.combo
    assert combo.fontMetrics().horizontalAdvance(combo.currentText()) < combo.width() - 20
    assert header.minimumSizeHint().width() <= narrow + 12
    # a narrow pane cuts its note, never its picker
    header.set_mode("shardy")
    header.set_note("compiling with GSPMD…")
    header.resize(120, 30)
    qtbot.waitUntil(lambda: header.width() <= header.minimumSizeHint().width() + 1)
    assert combo.width() >= combo.sizeHint().width()
    header.set_names(JAX)
    assert header.mode_texts() == [name for _, name in MODES]


def test_marks_name_the_other_panes_spec_and_follow_redraws(panel_for):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    marks = PaneMarks(view)
    vid = next(b.value_id for b in view.badges if b.value_id is not None)
    marks.set_differences({vid: ((("data",), ()), ((), ()))}, "gspmd", gspmd=True)
    (mark,) = [c for c in view.badge_for(vid).childItems() if isinstance(c, GspmdMarkItem)]
    assert mark.text == "GSPMD [_, _]" and mark.color == QColor(GSPMD_COLOR)
    assert "this pane: [data, _]" in mark.toolTip()
    marks.set_differences({vid: ((("data",), ()), ((), ()))}, "before")
    (mark,) = [c for c in view.badge_for(vid).childItems() if isinstance(c, GspmdMarkItem)]
    assert mark.text == "before [_, _]"
    assert mark.color == QColor(view.style_.theme.highlight)  # the changed badges' colour
    view.expand_all()  # a new drawing: marked again
    assert marks.marked_values() == {vid}
    assert [c for c in view.badge_for(vid).childItems() if isinstance(c, GspmdMarkItem)]
    marks.close()
    assert marks.marked_values() == set()
    assert not [c for c in view.badge_for(vid).childItems() if isinstance(c, GspmdMarkItem)]
