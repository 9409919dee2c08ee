"""Fixtures for window tests: a window with a program loaded, user-like drops and menu picks."""

import time

import pytest
from PySide6.QtGui import QAction

from shardscope.app.window.main_window import MainWindow
from shardscope.viewers.common.mime import axis_mime_data
from tests.support.qt_events import drop


@pytest.fixture(autouse=True)
def _unsaved_edits_are_discarded(monkeypatch):
    """Windows closed with edits at teardown discard them instead of asking; tests of the
    prompt answer it themselves."""
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "discard")


@pytest.fixture
def make_window(qtbot):
    """Factory: a MainWindow with ``source`` loaded (and propagated, unless ``propagate=False``).

    Windows are closed at teardown, which waits for their worker tasks.
    """
    windows = []

    def make(source: str | None = "example:mlp", *, propagate: bool = True, **kwargs):
        window = MainWindow(auto_propagate=propagate, **kwargs)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        windows.append(window)
        if source:
            window.open_program(source)
            qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
            if propagate:
                qtbot.waitUntil(lambda: window.propagation.count > 0, timeout=60_000)
        return window

    yield make
    for window in windows:
        window.close()
        window.runner.wait(30_000)


@pytest.fixture
def wait_idle(qtbot):
    """``wait_idle(window)``: wait until no load or propagation is in flight or pending."""

    def wait(window, timeout: float = 30.0) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            qtbot.wait(20)
            if not window.runner.busy and not window.propagation.pending:
                return
        raise AssertionError("background tasks did not finish")

    return wait


@pytest.fixture
def drop_axis():
    """``drop_axis(window, value_id, dim, axis)``: drop a mesh axis (None: replicated) on a
    dimension chip of a value's badge, as a real drag would end (``modifiers``: the keys
    held, e.g. Shift to append)."""

    def drop_on_badge(window, value_id: int, dim: int, axis, modifiers=None):
        view = window.graph
        badge = view.badge_for(value_id)
        view.centerOn(badge)
        pos = view.mapFromScene(badge.chip_scene_center(dim))
        mime = axis_mime_data(axis)  # QDropEvent does not own its data: keep it alive
        if modifiers is None:
            return drop(view, pos, mime), mime
        return drop(view, pos, mime, modifiers), mime

    return drop_on_badge


def menu_action(window, menu_title: str, text: str) -> QAction:
    """The QAction the user sees as ``text`` in menu ``menu_title`` of the menu bar."""
    for top in window.menuBar().actions():
        if top.text() == menu_title:
            for action in top.menu().actions():
                if action.text() == text:
                    return action
            raise AssertionError(f"no {text!r} in {menu_title}")
    raise AssertionError(f"no menu {menu_title!r}")


@pytest.fixture
def find_action():
    """``find_action(window, "&File", "&Save session")``: a menu entry's QAction."""
    return menu_action


@pytest.fixture
def pick():
    """``pick(window, "&File", "&Save session")``: trigger a menu entry as a user would."""

    def trigger(window, menu_title: str, text: str) -> QAction:
        action = menu_action(window, menu_title, text)
        assert action.isEnabled(), f"{text} is disabled"
        action.trigger()
        return action

    return trigger
