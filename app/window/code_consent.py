"""The question before the window runs a Python file that a session or recovery file
named rather than the user: nothing such a file names runs until the user agrees to run
that file, by name (``ask_to_run``). Opening a session saved without its program
(``ask_run_source``) and running a session's program (``allow_session_code``) ask first.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QMainWindow, QMessageBox

from shardscope.backend.program.consent import allow, needs_consent, source_python_file
from shardscope.backend.program.load import Program
from shardscope.viewers.common.messages import MessagesView


class CodeConsent:
    """Asks before a file a session named runs, and says a No in Messages."""

    def __init__(self, window: QMainWindow, messages: MessagesView) -> None:
        self.window = window
        self.messages = messages

    def ask_run_source(self, source: str, what: str) -> bool:
        """A session without its saved program can only open by running its source: True
        for built-in examples, ``.mlir`` modules and captures (data), and for a Python
        source only if the user agrees (``ask_to_run``)."""
        path = source_python_file(source)
        if path is None:
            return True
        if self.ask_to_run(
            path, f"{what} was saved without its program, so opening it runs {path}."
        ):
            return True
        self.messages.add(
            f"not opened: {what} was saved without its program and opening it would run "
            f"{path}; open it again and choose Yes to run it, or open the program "
            "with File > Open program",
            "warning",
        )
        return False

    def ask_to_run(self, path: str, why: str) -> bool:
        """Ask whether to run the Python file ``path`` (named by a session file, not by the
        user); ``why`` says what would run it. The environment variable
        ``SHARDSCOPE_RUN_SOURCE`` (``run`` or ``cancel``) answers without asking, for tests
        and scripts."""
        buttons = QMessageBox.StandardButton
        answer = {"run": buttons.Yes, "cancel": buttons.Cancel}.get(
            os.environ.get("SHARDSCOPE_RUN_SOURCE", "").lower()
        )
        if answer is None:
            answer = QMessageBox.question(
                self.window,
                "Run the program?",
                f"{why} This imports and runs its Python code. Run {Path(path).name}?",
                buttons.Yes | buttons.Cancel,
                buttons.Cancel,
            )
        return answer == buttons.Yes

    def allow_session_code(self, program: Program, action: str) -> bool:
        """Before ``action`` runs ``program``'s Python file: True if it may, asking first
        when a session file named that file (``consent.needs_consent``); the answer is kept
        for this program."""
        path = needs_consent(program)
        if path is None:
            return True
        if not self.confirm_session_file(path, action):
            return False
        allow(program, path)
        return True

    def confirm_session_file(self, path: str, action: str) -> bool:
        """Ask before ``action`` runs ``path``, a file a session named; a No is said in
        Messages and the status bar."""
        if self.ask_to_run(path, f"{action} runs {path}, which the session file names."):
            return True
        self.messages.add(
            f"not run: {path} came from the session file; {action} runs it only once you "
            "choose Yes",
            "warning",
        )
        self.window.statusBar().showMessage(f"not run: {Path(path).name} was not allowed", 6000)
        return False
