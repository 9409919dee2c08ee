"""The window's Run action: run the program on the devices off the GUI thread, show it.

``RunController.run_now`` runs ``backend.run.runner.run_program`` on the session's
program, mesh and specs (with the current propagation, to match predicted collectives
with compiled ones) in the thread pool; the program itself runs in a worker process.
One run at a time: a second request while one runs is refused in the messages. A failure
is one line in the messages and changes nothing in the session. After an edit of the
mesh or specs the Run dock marks its result stale; a new program clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from shardscope.backend.run.result import RunResult
from shardscope.viewers.run.panel import RunPanel

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from shardscope.app.window.tasks import TaskRunner
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.session.document import Session
    from shardscope.backend.sharding.mesh import Mesh
    from shardscope.viewers.common.messages import MessagesView
    from shardscope.viewers.mesh.device_grid import DeviceGridView

RUN_TIMEOUT_S = 300.0


def run_task(
    program: Program,
    mesh: Mesh,
    specs: dict,
    propagation: PropagationResult | None,
    timeout: float = RUN_TIMEOUT_S,
) -> Callable[[], RunResult]:
    """The function a run task runs (JAX is imported by the worker, not here)."""

    def run() -> RunResult:
        from shardscope.backend.run.runner import run_program

        return run_program(program, mesh, specs, timeout=timeout, propagation=propagation)

    return run


class RunController(QObject):
    """See the module docstring."""

    def __init__(
        self,
        session: Session,
        runner: TaskRunner,
        panel: RunPanel,
        grid: DeviceGridView,
        messages: MessagesView,
        status_bar: QStatusBar,
        *,
        show_dock: Callable[[], None] = lambda: None,
        timeout: float = RUN_TIMEOUT_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.panel = panel
        self.grid = grid
        self.messages = messages
        self.status_bar = status_bar
        self.show_dock = show_dock
        self.timeout = timeout
        self.running = False
        self.count = 0  # results shown so far
        self.failures = 0
        self._generation = 0
        ev = session.events
        ev.program.connect(self._on_program)
        ev.mesh.connect(self._on_edit)
        ev.specs.connect(self._on_edit)
        panel.collectiveSelected.connect(self.show_collective)

    def close(self) -> None:
        self._generation += 1
        ev = self.session.events
        ev.program.disconnect(self._on_program)
        ev.mesh.disconnect(self._on_edit)
        ev.specs.disconnect(self._on_edit)

    def run_now(self) -> None:
        """Run the program on as many devices as the mesh has (Propagation > Run on devices)."""
        session = self.session
        program, mesh = session.program, session.mesh
        if self.running:
            self.messages.add("a run is already in progress: wait for it to finish", "warning")
            return
        if program is None or mesh is None:
            self.messages.add("open a program first (File > Open example…), then run it", "warning")
            return
        self.running = True
        self._generation += 1
        generation = self._generation
        what = f"{program.name} on {mesh.size} devices"
        self.panel.set_running(what)
        self.show_dock()
        self.status_bar.showMessage(f"Running {what}…")
        fn = run_task(
            program, mesh, session.specs_for_propagation(), session.propagation, self.timeout
        )

        def done(result: RunResult, seconds: float) -> None:
            self.running = False
            if generation != self._generation:
                return
            self.count += 1
            self.grid.set_groups([])
            self.panel.set_result(result)
            for note in result.notes:
                self.messages.add(f"run: {note}", "warning")
            self.status_bar.showMessage(
                f"ran on {result.device_count} {result.platform.upper()} devices in "
                f"{seconds:.2f} s",
                4000,
            )

        def failed(message: str) -> None:
            self.running = False
            if generation != self._generation:
                return
            self.failures += 1
            self.panel.set_failed(message)
            self.messages.error(f"run failed: {message}")
            self.status_bar.showMessage("the run failed (see Messages)", 4000)

        self.runner.start(fn, done, failed)

    def show_collective(self, index: int) -> None:
        """Outline the device groups compiled collective ``index`` ran in on the mesh."""
        result = self.panel.result
        if result is None or not 0 <= index < len(result.collectives):
            return
        groups = result.collectives[index].device_groups
        self.grid.set_groups(list(groups) if groups else [])

    def _on_program(self, _program) -> None:
        self._generation += 1  # a run of the previous program is not shown
        self.grid.set_groups([])
        self.panel.set_result(None)

    def _on_edit(self, *_args) -> None:
        if self.panel.result is not None:
            self.panel.set_stale(True)
