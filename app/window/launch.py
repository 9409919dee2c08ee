"""Start the GUI: build the window, restore or load the program, run Qt's event loop."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from shardscope.app.window.display import display_problem
from shardscope.app.window.files import ask_restore
from shardscope.app.window.main_window import MainWindow
from shardscope.app.window.theme import projector_font
from shardscope.backend.session.persistence import read_recovery


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
