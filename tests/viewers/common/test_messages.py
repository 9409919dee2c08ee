"""The messages list: errors in red, warnings amber, information in the palette's colour."""

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

from shardscope.viewers.common.colors import THEMES
from shardscope.viewers.common.messages import MAX_ITEMS, MessagesView


def themed(view: MessagesView, dark: bool) -> None:
    palette = QPalette(view.palette())
    palette.setColor(QPalette.ColorRole.Window, QColor("#252526" if dark else "#F2F2F2"))
    view.setPalette(palette)


@pytest.fixture
def view(qtbot):
    view = MessagesView()
    qtbot.addWidget(view)
    themed(view, dark=True)
    return view


def foreground(view: MessagesView, row: int):
    return view.item(row).data(Qt.ItemDataRole.ForegroundRole)


def test_an_error_is_shown_in_red(view):
    view.error("x: spec dim 0 uses unknown axis 'foo': use one of data, model")
    color = foreground(view, 0).color()
    assert color == THEMES["dark"].error
    assert color.red() > 200 and color.red() - max(color.green(), color.blue()) > 60
    assert view.messages("error") == [
        "x: spec dim 0 uses unknown axis 'foo': use one of data, model"
    ]


def test_a_line_starts_with_the_time_and_keeps_the_text_whole(view):
    view.add("loaded example:mlp in 0.4 s")
    item = view.item(0)
    assert re.fullmatch(r"\d\d:\d\d:\d\d  loaded example:mlp in 0\.4 s", item.text())
    assert item.toolTip() == "loaded example:mlp in 0.4 s"


def test_information_follows_the_palette_and_warnings_are_amber(view):
    view.add("propagated in 0.2 s")
    view.add("x: dim 0 of size 10 does not divide by 4", "warning")
    assert foreground(view, 0) is None
    assert foreground(view, 1).color() == QColor("#E0A030")


def test_levels_filter_and_an_unknown_level_is_information(view):
    view.add("one")
    view.add("two", "warning")
    view.add("three", "shouting")
    view.error("four")
    assert view.messages() == ["one", "two", "three", "four"]
    assert view.messages("info") == ["one", "three"]
    assert view.messages("warning") == ["two"]
    assert view.messages("error") == ["four"]


def test_each_message_is_announced(view, qtbot):
    with qtbot.waitSignal(view.messageAdded) as blocker:
        view.error("boom")
    assert blocker.args == ["error", "boom"]


def test_a_theme_switch_recolours_the_lines(view):
    view.error("boom")
    view.add("careful", "warning")
    view.add("fine")
    themed(view, dark=False)
    view.restyle()
    assert foreground(view, 0).color() == THEMES["light"].error
    assert foreground(view, 1).color() == QColor("#8A5A00")
    assert foreground(view, 2) is None


def test_only_the_newest_messages_are_kept_and_the_newest_is_in_view(view, qtbot):
    view.resize(300, 120)
    view.show()
    for i in range(MAX_ITEMS + 20):
        view.add(f"message {i}")
    assert view.count() == MAX_ITEMS
    assert view.messages()[0] == "message 20"
    assert view.messages()[-1] == f"message {MAX_ITEMS + 19}"
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())


def test_a_failure_shows_in_a_banner_the_status_bar_and_the_raised_messages_dock(qtbot):
    from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow

    from shardscope.viewers.common.messages import ErrorBanner

    window = QMainWindow()
    qtbot.addWidget(window)
    window.setCentralWidget(QLabel("the graph"))
    messages = MessagesView()
    dock = QDockWidget("Messages", window)
    dock.setWidget(messages)
    other = QDockWidget("Conflicts", window)
    other.setWidget(QLabel("conflicts"))
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    window.tabifyDockWidget(dock, other)
    other.raise_()
    window.resize(900, 600)
    window.show()
    banner = ErrorBanner(window, messages)
    messages.add("loading x.py")
    messages.error("a background error")  # not asked for: nothing pops up
    assert not banner.isVisible()
    dock.close()  # even a closed Messages dock comes back
    messages.fail("x.py: no such file; check the path and open it again")
    assert banner.isVisible() and banner.label.text().startswith("x.py: no such file")
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    assert messages.currentItem().toolTip().startswith("x.py: no such file")
    assert window.statusBar().currentMessage().startswith("x.py: no such file")
    central = window.centralWidget().geometry()
    assert central.contains(banner.geometry().topLeft())
    assert banner.width() <= central.width()
    image = banner.grab().toImage()
    assert image.pixelColor(image.width() // 2, 2).red() > 150  # a red band
    window.resize(600, 500)
    qtbot.waitUntil(lambda: banner.width() <= window.centralWidget().width())
    qtbot.mouseClick(banner.close_button, Qt.MouseButton.LeftButton)
    assert not banner.isVisible()
    assert messages.messages("error")[-1].startswith("x.py: no such file")
