"""``column_layout``: a widget's parts stacked top to bottom in the order given."""

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from shardscope.viewers.common.layouts import column_layout


def test_parts_are_stacked_in_order_with_their_stretch(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    top, bottom = QLabel("top"), QLabel("bottom")
    row = QHBoxLayout()
    layout = column_layout(host, [top, row, (bottom, 3)], spacing=6)
    assert host.layout() is layout
    assert [layout.itemAt(i).widget() for i in (0, 2)] == [top, bottom]
    assert layout.itemAt(1).layout() is row
    assert [layout.stretch(i) for i in range(3)] == [0, 0, 3]
    assert layout.spacing() == 6
    margins = layout.contentsMargins()
    assert (margins.left(), margins.top(), margins.right(), margins.bottom()) == (4, 4, 4, 4)
