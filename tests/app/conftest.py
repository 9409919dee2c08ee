"""GUI tests run offscreen, with settings and recovery files in a temporary folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """Each test gets its own settings ini and recovery folder."""
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "discard")


@pytest.fixture
def make_window(qtbot):
    """Factory: a MainWindow with ``source`` loaded (and propagated, when available).

    Windows are closed at teardown, which waits for their worker tasks.
    """
    from shardscope.app.window.main_window import MainWindow

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
            if propagate and window.can_propagate:
                qtbot.waitUntil(lambda: window.propagations > 0, timeout=60_000)
        return window

    yield make
    for window in windows:
        window.close()
        window.runner.wait(30_000)


def wait_idle(qtbot, window, timeout: float = 30.0) -> None:
    """Wait until no load or propagation task is in flight (and the debounce fired)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        qtbot.wait(20)
        if not window.runner.busy and not window._propagate_timer.isActive():
            return
    raise AssertionError("background tasks did not finish")
