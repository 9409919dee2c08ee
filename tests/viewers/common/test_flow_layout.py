"""The flow layout: widgets in a row at their size hints, wrapped onto new rows."""

from PySide6.QtWidgets import QPushButton, QWidget

from shardscope.viewers.common.flow_layout import FlowLayout


def make_row(qtbot, count: int, width: int):
    host = QWidget()
    qtbot.addWidget(host)
    flow = FlowLayout(host, spacing=4)
    buttons = []
    for i in range(count):
        button = QPushButton(f"b{i}")
        button.setFixedSize(100, 30)
        flow.addWidget(button)
        buttons.append(button)
    host.resize(width, flow.heightForWidth(width))
    host.show()
    qtbot.waitExposed(host)
    return host, flow, buttons


def test_a_row_wraps_when_full(qtbot):
    host, flow, buttons = make_row(qtbot, 4, 220)
    assert [(b.x(), b.y()) for b in buttons] == [(0, 0), (104, 0), (0, 34), (104, 34)]
    assert flow.heightForWidth(220) == 64
    assert flow.heightForWidth(500) == 30


def test_its_minimum_width_is_its_widest_item(qtbot):
    host, flow, _ = make_row(qtbot, 4, 420)
    assert flow.minimumSize().width() == 100
    assert flow.heightForWidth(100) == 4 * 30 + 3 * 4


def test_insert_and_remove_keep_the_order(qtbot):
    host, flow, buttons = make_row(qtbot, 2, 500)
    first = QPushButton("first")
    first.setFixedSize(50, 30)
    flow.insertWidget(0, first)
    assert [flow.itemAt(i).widget() for i in range(flow.count())] == [first, *buttons]
    flow.removeWidget(buttons[0])
    assert [flow.itemAt(i).widget() for i in range(flow.count())] == [first, buttons[1]]
    qtbot.waitUntil(lambda: (first.x(), buttons[1].x()) == (0, 54))
