"""Start the GUI: check for a display, build the window, load the program, run Qt."""

from __future__ import annotations

import os
import sys

HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay")


def display_problem() -> str | None:
    """Why no window can be opened here, or None when one can."""
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if platform in HEADLESS_PLATFORMS or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display: neither DISPLAY nor WAYLAND_DISPLAY is set; set DISPLAY, use ssh -X, "
        "or run `python main.py render PROGRAM --view graph --out graph.png` for pictures"
    )


def guard_emit_refcount() -> None:
    """Work around PySide6 builds whose ``SignalInstance.emit`` returns an unowned bool.

    PySide6 6.12.0 drops one reference to ``True`` per Python-side ``emit()``, so a long
    session would eventually abort in ``bool_dealloc``. The patch is applied only when
    the leak is measured, so a fixed PySide6 runs unpatched.
    """
    import ctypes

    from PySide6.QtCore import QObject, Signal, SignalInstance

    if getattr(SignalInstance.emit, "_shardscope_guard", False):
        return

    class _Probe(QObject):
        fired = Signal(int)

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(64):
        probe.fired.emit(0)
    if before - sys.getrefcount(True) < 32:
        return
    original = SignalInstance.emit

    def emit(self, *args):
        result = original(self, *args)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(result))
        return result

    emit._shardscope_guard = True
    SignalInstance.emit = emit


def run_gui(program_source: str | None = "example:mlp") -> int:
    """Open the main window on ``program_source`` and run the event loop; 2 without a display."""
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow, ask_restore
    from app.theme import projector_font
    from backend.session import read_recovery

    app = QApplication.instance() or QApplication([sys.argv[0]])
    guard_emit_refcount()
    app.setApplicationName("shardscope")
    app.setOrganizationName("shardscope")
    projector_font(app)
    window = MainWindow()
    window.show()
    state = read_recovery()
    if state is not None and ask_restore(window, state):
        window.restore_state(state)
    elif program_source and program_source.endswith(".json"):
        window.open_session(program_source)
    elif program_source:
        window.open_program(program_source)
    return int(app.exec())
