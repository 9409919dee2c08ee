"""What the window opens and saves: programs, examples and sessions, PNG/SVG exports, the
recent-files menu, the window title (program name, unsaved mark), and the prompt that
offers to restore an unsaved session after a crash (``ask_restore``).

Programs load in the thread pool; a load that fails reports to the messages dock and
leaves the session as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMainWindow, QMenu, QMessageBox, QWidget

from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner, load_task
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import Program, list_examples
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.graph.panel import export_view
from shardscope.viewers.graph.view import GraphView


class FileHandler:
    """The window's file actions and title; see the module docstring."""

    def __init__(
        self,
        window: QMainWindow,
        *,
        session: Session,
        undo: UndoBridge,
        runner: TaskRunner,
        settings: Settings,
        messages: MessagesView,
        graph: GraphView,
        load_timeout: float,
    ) -> None:
        self.window = window
        self.session = session
        self.undo = undo
        self.runner = runner
        self.settings = settings
        self.messages = messages
        self.graph = graph
        self.load_timeout = load_timeout
        self.session_path: Path | None = None
        self.loading: str | None = None  # the source being loaded, if any
        self.recent_menu = QMenu("Open &recent", window)
        self.update_recent_menu()
        undo.qstack.cleanChanged.connect(self._on_clean_changed)

    # -- opening ------------------------------------------------------------------------
    def open_program(self, source: str, state: dict | None = None) -> None:
        """Load ``source`` off the GUI thread; the session changes only if it loads."""
        self.loading = source
        status = self.window.statusBar()
        status.showMessage(f"loading {source}…")
        self.messages.add(f"loading {source}")

        def done(program: Program, seconds: float) -> None:
            if self.loading != source:
                return  # a newer load superseded this one
            self.loading = None
            self.undo.clear()
            self.session.set_program(program, state=state)
            self.settings.add_recent(source if state is None else str(self.session_path or source))
            self.update_recent_menu()
            self.messages.add(
                f"loaded {program.name}: {len(program.graph.ops)} ops in {seconds:.2f} s"
            )
            status.showMessage(f"loaded {program.name}", 4000)

        def failed(message: str) -> None:
            if self.loading == source:
                self.loading = None
            self.messages.error(message)
            status.showMessage("loading failed", 4000)

        self.runner.start(load_task(source, self.load_timeout), done, failed)

    def open_session(self, path: str | Path) -> bool:
        """Open a saved session: its program, mesh, specs and view."""
        try:
            state = Session.read(path)
        except ShardscopeError as exc:
            self.messages.error(str(exc))
            return False
        self.session_path = Path(path)
        self.open_program(state["source"], state)
        return True

    def restore_state(self, state: dict) -> None:
        """Reopen a recovered (unsaved) session."""
        self.messages.add("restoring the unsaved session from the recovery file")
        self.open_program(state["source"], state)

    def ask_open_program(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open program", "", "Programs (*.py *.mlir);;All files (*)"
        )
        if path:
            self.open_program(path)

    def ask_open_example(self) -> None:
        name, ok = QInputDialog.getItem(
            self.window, "Open example", "Example:", list_examples(), 0, False
        )
        if ok and name:
            self.open_program(f"example:{name}")

    def ask_open_session(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open session", "", "shardscope sessions (*.json);;All files (*)"
        )
        if path:
            self.open_session(path)

    # -- saving and exporting -----------------------------------------------------------
    def save_session(self) -> bool:
        """Save to the session's file, asking for one the first time."""
        if self.session_path is None:
            return self.ask_save_session_as()
        return self.save_session_to(self.session_path)

    def ask_save_session_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save session", "session.json", "shardscope sessions (*.json)"
        )
        return self.save_session_to(path) if path else False

    def save_session_to(self, path: str | Path) -> bool:
        """Save the session to ``path``; it becomes the session's file and the state is clean."""
        if self.session.source is None:
            self.messages.error("nothing to save: open a program first")
            return False
        try:
            self.session.save(path)
        except OSError as exc:
            self.messages.error(f"cannot save {path}: {exc.strerror}")
            return False
        self.session_path = Path(path)
        self.undo.qstack.setClean()
        self.settings.add_recent(str(path))
        self.update_recent_menu()
        self.messages.add(f"saved session {path}")
        return True

    def ask_export(self, fmt: str) -> None:
        program = self.session.program
        name = (program.name if program else "graph") + f".{fmt}"
        path, _ = QFileDialog.getSaveFileName(self.window, f"Export view as {fmt.upper()}", name)
        if path:
            self.export(path)

    def export(self, path: str | Path) -> bool:
        """Write the graph view to ``path`` (PNG or SVG by its suffix)."""
        try:
            export_view(self.graph, path)
        except (OSError, ValueError) as exc:
            self.messages.error(f"cannot export {path}: {exc}")
            return False
        self.messages.add(f"exported {path}")
        return True

    # -- recent files and title ---------------------------------------------------------
    def update_recent_menu(self) -> None:
        """Refill Open recent: sessions (``.json``) reopen as sessions, the rest as programs."""
        self.recent_menu.clear()
        for item in self.settings.recent():
            act = self.recent_menu.addAction(item)
            if item.endswith(".json"):
                act.triggered.connect(lambda _=False, p=item: self.open_session(p))
            else:
                act.triggered.connect(lambda _=False, s=item: self.open_program(s))
        self.recent_menu.setEnabled(bool(self.settings.recent()))

    def update_title(self) -> None:
        """``program • — shardscope``; the dot marks edits since the last save or load."""
        program = self.session.program
        name = program.name if program is not None else (self.loading or "no program")
        dirty = "" if self.undo.qstack.isClean() else " •"
        self.window.setWindowTitle(f"{name}{dirty} — shardscope")

    def _on_clean_changed(self, _clean: bool) -> None:
        try:
            self.update_title()
        except RuntimeError:
            pass  # the undo stack is being destroyed with the window


def ask_restore(parent: QWidget | None, state: dict) -> bool:
    """Ask whether to restore a recovered session (env ``SHARDSCOPE_RECOVERY`` answers
    ``restore`` or ``discard`` without asking, for tests and scripts)."""
    answer = os.environ.get("SHARDSCOPE_RECOVERY", "").lower()
    if answer in ("restore", "yes"):
        return True
    if answer in ("discard", "no"):
        return False
    n = len(state.get("specs") or [])
    box = QMessageBox(parent)
    box.setWindowTitle("Restore unsaved session?")
    box.setText(
        f"shardscope did not exit cleanly while editing {state.get('source')} "
        f"({n} tensor spec{'s' if n != 1 else ''}). Restore those edits?"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.setDefaultButton(QMessageBox.StandardButton.Yes)
    return box.exec() == QMessageBox.StandardButton.Yes
