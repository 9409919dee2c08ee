"""A combo box as wide as its longest entry with room, cut with … without."""

from PySide6.QtWidgets import QHBoxLayout, QWidget

from shardscope.viewers.common.fitted_combo import FittedCombo

LONG = "CPU host (fake devices of one process, a modest host)"


def test_it_asks_room_for_its_longest_entry_and_shows_it_whole_with_room(qtbot):
    combo = FittedCombo(least=10)
    qtbot.addWidget(combo)
    combo.addItems(["TPU v5e", LONG])
    combo.setToolTip("the hardware")
    combo.setCurrentIndex(1)
    combo.resize(combo.sizeHint())
    combo.show()
    assert combo.sizeHint().width() > combo.fontMetrics().horizontalAdvance(LONG)
    assert combo.shown_text == LONG
    assert combo.toolTip() == f"{LONG}\n\nthe hardware"


def test_squeezed_it_shrinks_to_its_least_and_cuts_its_text(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    row = QHBoxLayout(holder)
    combo = FittedCombo(holder, least=10)
    combo.addItems([LONG])
    row.addWidget(combo)
    assert combo.minimumSizeHint().width() < combo.sizeHint().width() / 2
    holder.resize(combo.minimumSizeHint().width() + 30, 40)
    holder.show()
    qtbot.waitUntil(lambda: combo.width() < combo.sizeHint().width())
    shown = combo.shown_text
    assert shown.endswith("…") and LONG.startswith(shown[:-1])
    assert LONG in combo.toolTip()
    # its picture is drawn (the cut text in place of the whole)
    assert not combo.grab().isNull()
