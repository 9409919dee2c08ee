"""When the window propagates: on demand (F5), or right after each edit while automatic.

``PropagationScheduler`` runs propagation on the session's current mesh and specs in the
thread pool, through the program's ``PropagationServer`` (one child that keeps the
program parsed), and hands what comes back to the session: the final shardings first
(``Session.set_final_specs``: the badges show them at once), then the whole result.
Each propagation is compiled with XLA too (``compiling.WindowCompiler``): its worker
gets the annotated module the server sends after the final shardings, and the compiled
collectives follow the result (``Session.set_compiled``); a program whose framework
compiled it on the session's mesh with none of the user's specs (a torch_xla capture as
the script ran it) lists the framework's own compiled collectives instead
(``run.compiled.framework_report``), as ``propagate`` does. Edits made in
one turn of the event loop (a zero-length single-shot timer) propagate once, and an edit
through the undo stack starts as soon as it is whole (``flush``). A result that arrives
after a newer run started is dropped, the server cuts the older run short and the older
compile's worker is killed.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QStatusBar

from shardscope.app.window.compiling import WindowCompiler
from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner, propagate_task
from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import Program
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.propagation.server import FinalDims, PropagationServer
from shardscope.backend.run.compiled import framework_report, read_compile
from shardscope.backend.run.result import NotCompiled
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView

# Edits of one turn of the event loop propagate once; a lone edit at once.
PROPAGATE_DELAY_MS = 0
MAX_WARNINGS_SHOWN = 5


class PropagationScheduler(QObject):
    """Runs propagation for one session; see the module docstring."""

    # (generation, final dims), emitted on the task's thread, handled on the GUI thread
    finalSpecs = Signal(int, object)

    def __init__(
        self,
        session: Session,
        runner: TaskRunner,
        settings: Settings,
        messages: MessagesView,
        status_bar: QStatusBar,
        *,
        auto: bool | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.settings = settings
        self.messages = messages
        self.status_bar = status_bar
        self.auto = settings.auto_propagate() if auto is None else auto
        self.count = 0  # results applied so far
        self._generation = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(PROPAGATE_DELAY_MS)
        self.timer.timeout.connect(self.propagate_now)
        self.finalSpecs.connect(self._on_final_specs)
        self.server: PropagationServer | None = None
        self.compiler = WindowCompiler(session, messages, status_bar, parent=self)
        session.events.program.connect(self._on_program)

    @property
    def pending(self) -> bool:
        """Whether a propagation waits for the loop to turn (edits made outside the undo
        stack, such as loading a program, start on the next turn)."""
        return self.timer.isActive()

    def schedule(self) -> None:
        """After an edit: propagate once edits pause, if automatic and a program is open."""
        if self.auto and self.session.program is not None:
            self.timer.start()

    def flush(self) -> None:
        """Start the pending propagation now rather than on the next turn of the loop."""
        if self.timer.isActive():
            self.timer.stop()
            self.propagate_now()

    def set_auto(self, on: bool) -> None:
        """Turn propagation after each edit on or off (remembered in the settings)."""
        self.auto = bool(on)
        self.settings.set_auto_propagate(self.auto)
        self.schedule()

    def stop(self) -> None:
        """Propagate no more: the pending edit is dropped, the server's child stops and
        the compile under way ends with its worker."""
        self.timer.stop()
        self._generation += 1
        self.session.events.program.disconnect(self._on_program)
        self.compiler.close()
        self._close_server()

    def _on_program(self, program: Program | None) -> None:
        if self.server is not None and self.server.program is not program:
            self.compiler.end()
            self._close_server()

    def _close_server(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()

    def _server_for(self, program: Program) -> PropagationServer:
        if self.server is None or self.server.program is not program:
            self._close_server()
            self.server = PropagationServer(program)
        return self.server

    def _on_final_specs(self, generation: int, dims: FinalDims) -> None:
        if generation == self._generation:
            self.session.set_final_specs(dims)

    def propagate_now(self) -> None:
        """Run propagation on the current mesh and specs in the pool."""
        session = self.session
        if session.program is None or session.mesh is None:
            return
        self._generation += 1
        generation = self._generation
        mesh = session.mesh
        specs = session.specs_for_propagation()
        own = framework_report(session.program, mesh, specs)
        if own is None:
            job = self.compiler.start(generation, mesh)
        else:
            self.compiler.end()
            job = None

        def on_final(dims: FinalDims) -> None:
            self.finalSpecs.emit(generation, dims)
            if job is not None:
                job.final()

        fn = propagate_task(
            session.program,
            mesh,
            specs,
            server=self._server_for(session.program),
            on_final=on_final,
            on_annotated=job.module if job is not None else None,
            annotated_first=self.compiler.module_at_once,
        )

        def done(result: PropagationResult | None, seconds: float) -> None:
            if result is None or generation != self._generation:
                self.compiler.failed(job)
                return
            self.count += 1
            program = session.program
            result = replace(result, framework=program.framework, partitioner=program.partitioner)
            note = self.compiler.note_for(mesh) if own is None else None
            outcome = None if note is None else NotCompiled(note, failed=False)
            if own is not None:
                try:
                    outcome = read_compile(result, own)
                except ShardscopeError as exc:
                    outcome = NotCompiled(str(exc).splitlines()[0])
            session.set_propagation(result)
            warnings = Analysis(result, outcome).warnings
            shown = warnings[:MAX_WARNINGS_SHOWN]
            for warning in shown:
                self.messages.add(warning, "warning")
            if note is not None and note not in shown:
                self.messages.add(note, "warning")
            self.status_bar.showMessage(f"propagated in {seconds:.2f} s", 4000)
            if job is not None:
                self.compiler.propagated(job, result)
            elif outcome is not None:
                session.set_compiled(result, outcome)

        def failed(message: str) -> None:
            self.compiler.failed(job)
            if generation == self._generation:
                self.messages.error(f"propagation failed: {message}")

        self.runner.start(fn, done, failed)
