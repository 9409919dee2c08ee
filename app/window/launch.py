"""Start the GUI: build the window, restore or load the program, run Qt's event loop."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from shardscope.app.window.display import display_problem
from shardscope.app.window.main_window import MainWindow
from shardscope.app.window.theme import projector_font


def run_gui(program_source: str | None = "example:mlp") -> int:
    """Open the main window on ``program_source`` and run the event loop; 2 without a display."""
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("shardscope")
    app.setOrganizationName("shardscope")
    projector_font(app)
    window = start_window(program_source)  # noqa: F841  (the window lives while the loop runs)
    return int(app.exec())


def start_window(program_source: str | None) -> MainWindow:
    """Show the main window; restore the edits of a window that did not exit cleanly if
    the user says so, else open ``program_source`` (a session, a capture or a program)."""
    window = MainWindow()
    window.show()
    if window.files.offer_recoveries():
        return window
    if program_source:
        window.files.open_file(program_source)
    return window
