"""What the window opens and saves: programs, examples and sessions, PNG/SVG exports, the
recent-files menu, the window title (program name, unsaved mark), the Save / Discard /
Cancel prompt before unsaved edits would be lost (``confirm_unsaved``), and the prompt
that offers to restore the edits of a window that did not exit cleanly (``ask_restore``).

Programs load in the thread pool; a load that fails, or a session that does not fit its
program, reports where the user is looking (``MessagesView.fail``: a banner over the
graph, the Messages dock in front, the status bar) and leaves the window as it was
(title, session file, program, specs, undo history).

A session opens from the program saved in it, so opening one runs no code. Nothing a
session or recovery file names runs until the user agrees to run that file, by name
(``ask_to_run``): running the source again (``rerun_source``), running the program on
devices (``allow_session_code``), and opening a session saved before sessions held their
program (``ask_run_source``) each ask first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QInputDialog, QMainWindow, QMenu, QMessageBox, QWidget

from shardscope.app.window.capture_picker import pick_captured
from shardscope.app.window.file_dialogs import choose_file
from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner, load_task, saved_program_task
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.capture_file import (
    capture_source,
    is_capture_file,
    parse_capture,
    split_capture_source,
)
from shardscope.backend.program.consent import allow, needs_consent, source_python_file
from shardscope.backend.program.load import (
    Program,
    list_examples,
    read_mlir_text,
    split_source,
)
from shardscope.backend.session.document import Session
from shardscope.backend.session.persistence import orphan_recoveries, read_recovery, set_aside
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.graph.graph_panel import export_view
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
        self.loading: str | None = None  # the source being loaded, if any
        self.recent_menu = QMenu("Open &recent", window)
        self.update_recent_menu()
        undo.qstack.cleanChanged.connect(self._on_clean_changed)

    @property
    def session_path(self) -> Path | None:
        """The session file that Save writes: the one opened or last saved, else None."""
        return self.session.file

    @session_path.setter
    def session_path(self, path: Path | None) -> None:
        self.session.file = path

    # -- unsaved edits ------------------------------------------------------------------
    def confirm_unsaved(self, doing: str) -> bool:
        """Before edits would be lost: ask Save / Discard / Cancel; True to go on.

        The environment variable ``SHARDSCOPE_UNSAVED`` (``save``, ``discard`` or
        ``cancel``) answers without asking, for tests and scripts.
        """
        if self.undo.qstack.isClean() or self.session.source is None:
            return True
        buttons = QMessageBox.StandardButton
        answer = {"save": buttons.Save, "discard": buttons.Discard, "cancel": buttons.Cancel}.get(
            os.environ.get("SHARDSCOPE_UNSAVED", "").lower()
        )
        if answer is None:
            program = self.session.program
            name = program.name if program is not None else self.session.source
            answer = QMessageBox.question(
                self.window,
                "Unsaved edits",
                f"{name} has edits that are not saved. Save them before {doing}?",
                buttons.Save | buttons.Discard | buttons.Cancel,
                buttons.Save,
            )
        if answer == buttons.Save:
            return self.save_session()
        return answer == buttons.Discard

    # -- opening ------------------------------------------------------------------------
    def open_program(self, source: str, state: dict | None = None) -> bool:
        """Load ``source`` off the GUI thread; the session changes only if it loads.
        Unsaved edits are saved or discarded first, as the user answers (False: cancelled)."""
        if not self.confirm_unsaved(f"opening {source}"):
            return False
        chosen = self._choose_captured(source)
        if chosen is None:
            return False
        self._load(chosen, state)
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
            capture = parse_capture(read_mlir_text(Path(base)), base)
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

    def _load(
        self,
        source: str,
        state: dict | None = None,
        *,
        session_file: Path | None = None,
        recovered_from: Path | None = None,
        from_state: bool = False,
        unsaved: Callable[[Program], bool] | None = None,
    ) -> None:
        """Load ``source`` (with a saved ``state``: its mesh, specs and view), or with
        ``from_state`` open the program ``state`` holds instead of running ``source``.
        Nothing changes until the program has loaded and ``state`` fits it; then the
        window belongs to ``session_file`` (None: to no session file). A state restored
        ``recovered_from`` a recovery file stays unsaved, and that file is removed once
        this window's own recovery file holds its edits; so does a session for whose
        program ``unsaved(program)`` is True."""
        self.loading = source
        status = self.window.statusBar()
        what = str(session_file) if session_file is not None else source
        if from_state:
            status.showMessage(f"opening {what}…")
            self.messages.add(f"opening the program saved in {what} (no code runs)")
        else:
            status.showMessage(f"loading {source}…")
            self.messages.add(f"loading {source}")

        def done(program: Program, seconds: float) -> None:
            if self.loading != source:
                return  # a newer load superseded this one
            self.loading = None
            if state is not None:
                try:
                    self.session.check_state(program, state)
                except ShardscopeError as exc:
                    self.messages.fail(f"cannot open {what}: {exc}")
                    self.update_title()
                    return
            self.undo.clear()
            self.session_path = session_file
            self.session.set_program(program, state=state)
            if recovered_from is not None:
                self.undo.qstack.resetClean()
                recovered_from.unlink(missing_ok=True)
            elif unsaved is not None and unsaved(program):
                self.undo.qstack.resetClean()
                self.session.autosave()
            else:
                self.session.discard_recovery()
            self.settings.add_recent(str(session_file) if session_file is not None else source)
            self.update_recent_menu()
            if from_state:
                self.messages.add(
                    f"opened {program.name} as saved in {what}: {len(program.graph.ops)} ops; "
                    f"File > Run source again runs {source} to lower it anew"
                )
            else:
                self.messages.add(
                    f"loaded {program.name}: {len(program.graph.ops)} ops in {seconds:.2f} s"
                )
            unknown = program.unknown_spec_names() if state is None else []
            if unknown:
                self.messages.add(
                    f"the program's SPECS name {', '.join(map(repr, unknown))}, which it has no "
                    f"argument or result of, so they were left out: use argument names such "
                    f"as {', '.join(program.arg_names[:3])}, or result[i]",
                    "warning",
                )
            status.showMessage(f"loaded {program.name}", 4000)

        def failed(message: str) -> None:
            if self.loading == source:
                self.loading = None
            self.messages.fail(message)
            self.update_title()

        if from_state and state is not None:
            task = saved_program_task(state, what)
        else:
            task = load_task(source, self.load_timeout)
        self.runner.start(task, done, failed)

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
        if not state.get("program") and not self.ask_run_source(state["source"], str(path)):
            return False
        self._load(
            state["source"], state, session_file=Path(path), from_state=bool(state.get("program"))
        )
        return True

    def restore_state(self, state: dict, recovered_from: Path | None = None) -> None:
        """Reopen a recovered session: unsaved, and saving to the session file it came from."""
        if not state.get("program") and not self.ask_run_source(
            state["source"], "the recovery file"
        ):
            return
        self.messages.add("restoring the unsaved session from the recovery file")
        file = state.get("file")
        self._load(
            state["source"],
            state,
            session_file=Path(file) if file else None,
            recovered_from=recovered_from,
            from_state=bool(state.get("program")),
        )

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
        if not self._confirm_session_file(path, action):
            return False
        allow(program, path)
        return True

    def _confirm_session_file(self, path: str, action: str) -> bool:
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

    def rerun_source(self) -> bool:
        """Run the program's source again and keep the session's mesh, specs and view on the
        program it gives (a changed program leaves the session unsaved). False if there is
        no program or the user cancelled."""
        program = self.session.program
        if program is None or self.loading is not None:
            self.messages.fail("nothing to run again: open a program first")
            return False
        if program.kind == "api":
            self.messages.error(
                f"{program.name} came from shardscope.inspect in your own Python: call "
                "inspect(...).show() there again to see changed code"
            )
            return False
        gone = self._missing_source(program.source)
        if gone is not None:
            self.messages.fail(
                f"cannot run {program.source} again: {gone} is no longer there (moved or "
                "deleted); put it back, or open the program where it is now (File > Open "
                "program); the session is as it was"
            )
            return False
        path = source_python_file(program.source)
        if (
            program.from_session
            and path is not None
            and program.allowed_file != path
            and not self._confirm_session_file(path, "File > Run source again")
        ):
            return False
        state = {**self.session.to_json(), "program": None}
        before, clean = program.mlir_text, self.undo.qstack.isClean()
        names = {vid: program.graph.values[vid].display_name for vid in self.session.specs}

        def unsaved(new: Program) -> bool:
            kept = {new.graph.values[vid].display_name for vid in self.session.specs}
            lost = [name for name in names.values() if name not in kept]
            if lost:
                keeps = (
                    f"; {self.session_path} keeps them until you save"
                    if self.session_path is not None
                    else ""
                )
                self.messages.add(
                    f"the program {new.source} gives has no tensor for the specs of "
                    f"{', '.join(lost)}, so they were dropped{keeps}",
                    "warning",
                )
            changed = new.mlir_text != before
            if changed:
                self.messages.add(
                    f"{new.source} gives a different program than before; save the session "
                    "to keep the new one"
                )
            return not clean or changed or bool(lost)

        self.messages.add(f"running {program.source} again")
        self._load(program.source, state, session_file=self.session_path, unsaved=unsaved)
        return True

    @staticmethod
    def _missing_source(source: str) -> str | None:
        """The file ``source`` loads from, if it does not exist (None: it does, or
        ``source`` is a built-in example)."""
        base, _ = split_source(source)
        if base.startswith("example:"):
            return None
        if ".json#" in base:
            base = split_capture_source(base)[0]
        path = Path(base).expanduser()
        return None if path.exists() else str(path)

    def offer_recoveries(self) -> bool:
        """At start: offer the recovery files of windows that no longer run, newest first;
        True if one is being restored. A discarded one is deleted; a bad one is reported
        and renamed ``.bad``."""
        for path in orphan_recoveries():
            try:
                state = read_recovery(path)
            except ShardscopeError as exc:
                bad = set_aside(path)
                self.messages.error(f"{exc} (recovery file set aside as {bad.name})")
                continue
            if state is None:
                continue
            if ask_restore(self.window, state):
                self.restore_state(state, recovered_from=path)
                return True
            path.unlink(missing_ok=True)
        return False

    def ask_open_program(self) -> None:
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
        name, ok = QInputDialog.getItem(
            self.window, "Open example", "Example:", list_examples(), 0, False
        )
        if ok and name:
            self.open_program(f"example:{name}")

    def ask_open_session(self) -> None:
        chosen = choose_file(
            self.window,
            self.settings,
            "sessions",
            "Open session",
            "shardscope sessions (*.json);;All files (*)",
        )
        if chosen:
            self.open_session(chosen[0])

    # -- saving and exporting -----------------------------------------------------------
    def save_session(self) -> bool:
        """Save to the session's file, asking for one the first time."""
        if self.session_path is None:
            return self.ask_save_session_as()
        return self.save_session_to(self.session_path)

    def ask_save_session_as(self) -> bool:
        chosen = choose_file(
            self.window,
            self.settings,
            "sessions",
            "Save session",
            "shardscope sessions (*.json)",
            save_as="session.json",
            suffix="json",
        )
        return self.save_session_to(chosen[0]) if chosen else False

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
        chosen = choose_file(
            self.window,
            self.settings,
            "exports",
            f"Export view as {fmt.upper()}",
            f"{fmt.upper()} (*.{fmt})",
            save_as=name,
            suffix=fmt,
        )
        if chosen:
            self.export(chosen[0])

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
        """Refill Open recent: each item reopens as what it is (``open_file``)."""
        self.recent_menu.clear()
        for item in self.settings.recent():
            act = self.recent_menu.addAction(item)
            act.triggered.connect(lambda _=False, p=item: self.open_file(p))
        self.recent_menu.setEnabled(bool(self.settings.recent()))

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


def ask_restore(parent: QWidget | None, state: dict) -> bool:
    """Ask whether to restore a recovered session (env ``SHARDSCOPE_RECOVERY`` answers
    ``restore`` or ``discard`` without asking, for tests and scripts)."""
    answer = os.environ.get("SHARDSCOPE_RECOVERY", "").lower()
    if answer in ("restore", "yes"):
        return True
    if answer in ("discard", "no"):
        return False
    n = len(state.get("specs") or [])
    parts = [f"{n} tensor spec{'s' if n != 1 else ''}"]
    mesh = state.get("mesh")
    if mesh:
        try:
            parts.append(f"mesh {Mesh.from_json(mesh).describe()}")
        except ShardscopeError:
            pass
    if state.get("file"):
        parts.append(f"session {state['file']}")
    box = QMessageBox(parent)
    box.setWindowTitle("Restore unsaved session?")
    box.setText(
        f"shardscope did not exit cleanly while editing {state.get('source')} "
        f"({', '.join(parts)}). Restore those edits?"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    box.setDefaultButton(QMessageBox.StandardButton.Yes)
    return box.exec() == QMessageBox.StandardButton.Yes
