"""The window's File handling (``window.files``): opening programs, examples, sessions
and captures (and the dialogs that ask which), and the window title (program name,
unsaved mark). The other file jobs are parts it holds and the menus reach through it:
``loading`` (programs loaded off the GUI thread), ``saving`` (Save, Save as, the
unsaved-edits prompt), ``recent_files``, ``recovery`` (the restore prompt on start),
``view_export``, ``source_rerun`` and ``code_consent``.

A session opens from the program saved in it, so opening one runs no code. Nothing a
session or recovery file names runs until the user agrees to run that file, by name
(``CodeConsent.ask_to_run``).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QMainWindow

from shardscope.app.window.capture_picker import pick_captured
from shardscope.app.window.code_consent import CodeConsent
from shardscope.app.window.file_context import FileContext
from shardscope.app.window.file_dialogs import choose_file
from shardscope.app.window.loading import LoadRequest, ProgramLoader
from shardscope.app.window.recent_files import RecentMenu
from shardscope.app.window.recovery import offer_recoveries
from shardscope.app.window.saving import SessionSaver
from shardscope.app.window.settings import Settings
from shardscope.app.window.source_rerun import rerun_source
from shardscope.app.window.tasks import TaskRunner
from shardscope.app.window.undo import UndoBridge
from shardscope.app.window.view_export import ViewExporter
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import MAX_CAPTURE_BYTES
from shardscope.backend.program.capture_file import (
    capture_source,
    is_capture_file,
    parse_capture,
    split_capture_source,
)
from shardscope.backend.program.load import Program, list_examples, read_mlir_text, split_source
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView
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
        self.settings = settings
        self.messages = messages
        self.recent_menu = RecentMenu(window, settings, self.open_file, messages.fail)
        self.consent = CodeConsent(window, messages)
        context = FileContext(window, session, undo, settings, messages)
        self.saver = SessionSaver(context, self.recent_menu)
        self.exporter = ViewExporter(context, graph)
        self.loader = ProgramLoader(
            context,
            runner=runner,
            recent=self.recent_menu,
            load_timeout=load_timeout,
            update_title=lambda: self.update_title(),  # looked up per call: it may be replaced
        )
        undo.qstack.cleanChanged.connect(self._on_clean_changed)

    @property
    def loading(self) -> str | None:
        """The source being loaded, if any."""
        return self.loader.loading

    @property
    def session_path(self) -> Path | None:
        """The session file that Save writes: the one opened or last saved, else None."""
        return self.session.file

    # -- opening ------------------------------------------------------------------------
    def open_program(self, source: str, state: dict | None = None) -> bool:
        """Load ``source`` off the GUI thread; the session changes only if it loads.
        Unsaved edits are saved or discarded first, as the user answers (False: cancelled)."""
        if not self.confirm_unsaved(f"opening {source}"):
            return False
        chosen = self._choose_captured(source)
        if chosen is None:
            return False
        self.loader.load(LoadRequest(chosen, state))
        return True

    def open_file(self, path: str) -> bool:
        """Open ``path`` as what it is: a session, a capture file (``FILE#NAME`` for one of
        its functions), or a program."""
        base = split_capture_source(path)[0] if ".json#" in path else path
        if path.endswith(".json") and not is_capture_file(base):
            return self.open_session(path)
        return self.open_program(path)

    def _choose_captured(self, source: str) -> str | None:
        """``source``, or for a capture file named without ``#NAME`` the function the user
        picks in the capture picker (``capture_picker``); None if the file is bad or the
        user cancels."""
        base, _ = split_source(source)
        if not base.endswith(".json") or not is_capture_file(base):
            return source
        try:
            capture = parse_capture(
                read_mlir_text(Path(base), limit=MAX_CAPTURE_BYTES, what="capture"), base
            )
        except ShardscopeError as exc:
            self.messages.fail(str(exc))
            return None
        if not capture.functions:
            self.messages.fail(f"{base}: the capture holds no function; capture the script again")
            return None
        if len(capture.functions) == 1:
            return capture_source(base, capture.functions[0].name)
        chosen = pick_captured(self.window, base, capture)
        return None if chosen is None else capture_source(base, chosen.name)

    def open_session(self, path: str | Path) -> bool:
        """Open a saved session: its program, mesh, specs and view. A file that cannot be
        read or does not fit its program is reported and changes nothing."""
        try:
            state = Session.read(path)
        except ShardscopeError as exc:
            self.messages.fail(str(exc))
            return False
        if not self.confirm_unsaved(f"opening {path}"):
            return False
        if not state.get("program") and not self.consent.ask_run_source(state["source"], str(path)):
            return False
        self.loader.load(
            LoadRequest(
                state["source"],
                state,
                session_file=Path(path),
                from_state=bool(state.get("program")),
            )
        )
        return True

    def restore_state(self, state: dict, recovered_from: Path | None = None) -> None:
        """Reopen a recovered session: unsaved, and saving to the session file it came from."""
        if not state.get("program") and not self.consent.ask_run_source(
            state["source"], "the recovery file"
        ):
            return
        self.messages.add("restoring the unsaved session from the recovery file")
        file = state.get("file")
        self.loader.load(
            LoadRequest(
                state["source"],
                state,
                session_file=Path(file) if file else None,
                recovered_from=recovered_from,
                from_state=bool(state.get("program")),
            )
        )

    def offer_recoveries(self) -> bool:
        """At start: offer the recovery files of windows that no longer run
        (``recovery.offer_recoveries``); True if one is being restored."""
        return offer_recoveries(
            self.window,
            self.messages,
            lambda state, path: self.restore_state(state, recovered_from=path),
        )

    def rerun_source(self) -> bool:
        """File > Run source again (``source_rerun.rerun_source``)."""
        return rerun_source(self.session, self.undo, self.messages, self.consent, self.loader)

    def allow_session_code(self, program: Program, action: str) -> bool:
        """Before ``action`` runs ``program``'s Python file: True if it may
        (``CodeConsent.allow_session_code``)."""
        return self.consent.allow_session_code(program, action)

    def ask_open_program(self) -> None:
        """File > Open program: ask for a program or capture file and open it."""
        chosen = choose_file(
            self.window,
            self.settings,
            "programs",
            "Open program",
            "Programs (*.py *.mlir);;Captures (*.json);;All files (*)",
        )
        if chosen:
            self.open_program(chosen[0])

    def ask_open_example(self) -> None:
        """File > Open example: ask which built-in example and open it."""
        name, ok = QInputDialog.getItem(
            self.window, "Open example", "Example:", list_examples(), 0, False
        )
        if ok and name:
            self.open_program(f"example:{name}")

    def ask_open_session(self) -> None:
        """File > Open session: ask for a session file and open it."""
        chosen = choose_file(
            self.window,
            self.settings,
            "sessions",
            "Open session",
            "shardscope sessions (*.json);;All files (*)",
        )
        if chosen:
            self.open_session(chosen[0])

    # -- saving and exporting: the parts that do them -------------------------------------
    def confirm_unsaved(self, doing: str) -> bool:
        """Before edits would be lost: Save / Discard / Cancel (``SessionSaver``)."""
        return self.saver.confirm_unsaved(doing)

    def save_session(self) -> bool:
        """File > Save session (``SessionSaver.save_session``)."""
        return self.saver.save_session()

    def ask_save_session_as(self) -> bool:
        """File > Save session as (``SessionSaver.ask_save_session_as``)."""
        return self.saver.ask_save_session_as()

    def save_session_to(self, path: str | Path) -> bool:
        """Save the session to ``path`` (``SessionSaver.save_session_to``)."""
        return self.saver.save_session_to(path)

    def ask_export(self, fmt: str) -> None:
        """File > Export view as PNG / SVG (``ViewExporter.ask_export``)."""
        self.exporter.ask_export(fmt)

    def export(self, path: str | Path) -> bool:
        """Write the graph view to ``path`` (``ViewExporter.export``)."""
        return self.exporter.export(path)

    # -- title --------------------------------------------------------------------------
    def update_title(self) -> None:
        """``program • — shardscope``; the dot marks edits since the last save or load."""
        program = self.session.program
        name = program.name if program is not None else (self.loading or "no program")
        dirty = "" if self.undo.qstack.isClean() else " •"
        kind = ""
        if program is not None and program.partitioner == "gspmd":
            kind = f" ({program.framework} program, partitioned by GSPMD)"
        self.window.setWindowTitle(f"{name}{dirty}{kind} — shardscope")

    def _on_clean_changed(self, clean: bool) -> None:
        # with nothing unsaved there is nothing to recover, and a restore offer at the
        # next start would only bring back what the session file already holds
        if clean:
            self.session.discard_recovery()
        try:
            self.update_title()
        except RuntimeError:
            pass  # the undo stack is being destroyed with the window
