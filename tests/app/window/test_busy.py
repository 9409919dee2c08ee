"""The status bar's busy indicators: each shows what is under way with a Cancel button, and
Esc cancels the one shown last, then the one before it."""

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QToolButton, QWidget

from shardscope.app.window.busy import StatusBusy


def _window(qtbot):
    """A main window with its status bar and a widget that has the focus, as the
    window's views have it when the user presses a key."""
    window = QMainWindow()
    window.statusBar()
    field = QWidget()
    field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    window.setCentralWidget(field)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.centralWidget().setFocus()
    return window


def esc(window, qtbot):
    qtbot.keyClick(window.centralWidget(), Qt.Key.Key_Escape)


def test_the_cancel_button_and_esc_cancel_what_shows(qtbot):
    window = _window(qtbot)
    cancelled = []
    busy = StatusBusy(
        window, action="Cancel it", tooltip="Stop it", cancel=lambda: cancelled.append(1)
    )
    assert not busy.bar.isVisible() and not busy.cancel_action.isEnabled()
    esc(window, qtbot)
    assert cancelled == []  # nothing shows: Esc is left to the rest of the window
    busy.show("Drawing… (Esc cancels)")
    assert busy.bar.isVisible() and busy.label.text() == "Drawing… (Esc cancels)"
    qtbot.mouseClick(busy.cancel_button, Qt.MouseButton.LeftButton)
    esc(window, qtbot)
    assert cancelled == [1, 1]
    busy.hide()
    assert not busy.cancel_button.isVisible() and not busy.cancel_action.isEnabled()


def test_a_button_of_the_tasks_own_sits_before_cancel_and_hides_with_the_rest(qtbot):
    window = _window(qtbot)
    stopped = []
    extra = QToolButton()
    extra.setText("Stop early")
    extra.clicked.connect(lambda: stopped.append(1))
    busy = StatusBusy(
        window, action="Cancel it", tooltip="Stop it", cancel=lambda: None, extra=extra
    )
    busy.show("Compiling…")
    assert not extra.isVisible()  # the task shows it where it applies
    extra.show()
    qtbot.mouseClick(extra, Qt.MouseButton.LeftButton)
    assert stopped == [1]
    assert extra.geometry().right() < busy.cancel_button.geometry().left()
    busy.hide()
    assert not extra.isVisible() and not busy.label.isVisible()


def test_with_two_under_way_esc_cancels_the_last_then_the_one_before(qtbot):
    window = _window(qtbot)
    cancelled = []
    first = StatusBusy(window, action="a", tooltip="a", cancel=lambda: cancelled.append("first"))
    second = StatusBusy(window, action="b", tooltip="b", cancel=lambda: cancelled.append("second"))
    first.show("first…")
    second.show("second…")
    esc(window, qtbot)
    assert cancelled == ["second"]
    second.hide()
    esc(window, qtbot)
    assert cancelled == ["second", "first"]
    assert first.bar.isVisible() and not second.bar.isVisible()


def test_one_without_esc_leaves_the_key_to_the_window_and_to_the_others(qtbot):
    window = _window(qtbot)
    cancelled = []
    run = StatusBusy(
        window, action="Cancel run", tooltip="", cancel=lambda: cancelled.append("run")
    )
    quiet = StatusBusy(
        window,
        action="Cancel compile",
        tooltip="",
        cancel=lambda: cancelled.append("compile"),
        esc=False,
    )
    quiet.show("compiling…")
    assert quiet.showing and quiet.bar.isVisible()
    esc(window, qtbot)
    assert cancelled == []  # Esc is the window's
    run.show("running…")
    quiet.hide()
    quiet.show("compiling again…")  # shown last, yet Esc stays the run's
    esc(window, qtbot)
    assert cancelled == ["run"]
    quiet.cancel_button.click()
    assert cancelled == ["run", "compile"]
    assert quiet.cancel_action.shortcuts() == []


def _over_ssh(monkeypatch):
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.2 51234 10.0.0.9 22")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")  # read as data: the app stays offscreen


def test_over_a_remote_display_a_busy_indicator_shows_its_text_and_cancel_without_the_bar(
    qtbot, monkeypatch
):
    _over_ssh(monkeypatch)
    window = _window(qtbot)
    busy = StatusBusy(window, action="Cancel it", tooltip="Cancel", cancel=lambda: None)
    busy.show("Compiling")
    assert busy.still
    assert busy.label.isVisible() and busy.cancel_button.isVisible()
    assert not busy.bar.isVisible()
    busy.hide()
    assert not busy.label.isVisible() and not busy.cancel_button.isVisible()


def test_on_a_local_display_the_bar_moves(qtbot, monkeypatch):
    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    window = _window(qtbot)
    busy = StatusBusy(window, action="Cancel it", tooltip="Cancel", cancel=lambda: None)
    busy.show("Compiling")
    assert not busy.still and busy.bar.isVisible()


def test_over_ssh_the_window_says_once_why_its_busy_bars_stand_still(make_window, monkeypatch):
    _over_ssh(monkeypatch)
    window = make_window("example:mlp", propagate=False)
    (line,) = [m for m in window.messages.messages() if "display is remote" in m]
    assert "SSH_CONNECTION" in line and "without the moving bar" in line and "\n" not in line
    window.folding.indicator.show("Unfolding every scope")
    assert not window.folding.indicator.bar.isVisible()
