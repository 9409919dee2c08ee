"""The window's Run action: run the program on the devices off the GUI thread, show it.

``DeviceRuns.run_now`` runs ``backend.run.dispatch.run`` on the session's
program, mesh and specs (with the current propagation, to match predicted collectives
with compiled ones) in the thread pool; the program itself runs in a worker process, or
on a mesh laid over several hosts (``Session.hosts``) in one worker process per host on
JAX's distributed runtime (a ``RunRequest`` with ``hosts`` and ``dcn``), the busy bar saying on
how many; a failing host's one line shows in the Run dock and in Messages. A
program with no Python to call (a ``.mlir`` module, a capture, either from a session
file too) runs its module on seeded inputs (``run.module_run``); the result's notes,
shown in the messages, say that the inputs are not the script's.
One run at a time: a second request while one runs is refused in the messages. A
program from a session file runs only once the user has allowed its Python file
(``allow_code``, which asks). A failure
is one line in the messages and changes nothing in the session. The Run dock follows
the session itself (an edit of the mesh or specs marks its result stale, a new program
clears it) and outlines a chosen collective's device groups in the selection. A result
shown asks the window to give the Run dock room (``make_room``): its heat maps need it.

After a run, the ops XLA warned about get a mark on the graph (``show_warnings``, op id ->
messages); choosing a warning in the dock selects and reveals its op (``reveal_op``).
The dock's reshard view asks for a real ``jax.device_put`` (``check_reshard``), which runs
in a worker process through the same thread pool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from shardscope.app.window.busy import StatusBusy
from shardscope.backend.program.consent import needs_consent
from shardscope.backend.run.cancel import Cancel
from shardscope.backend.run.module_run import runs_module
from shardscope.backend.run.result import RunResult
from shardscope.backend.run.worker_failures import run_failed
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.run.run_panel import RunPanel

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from shardscope.app.window.tasks import TaskRunner
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.host_layout import HostLayout
    from shardscope.backend.session.selection import Selection
    from shardscope.backend.sharding.mesh import Mesh
    from shardscope.viewers.common.messages import MessagesView

RUN_TIMEOUT_S = 300.0
RESHARD_TIMEOUT_S = 120.0


def run_task(
    program: Program,
    mesh: Mesh,
    specs: dict,
    propagation: PropagationResult | None,
    timeout: float = RUN_TIMEOUT_S,
    cancel: Cancel | None = None,
    hosts: HostLayout | None = None,
) -> Callable[[], RunResult]:
    """The function a run task runs (JAX is imported by the worker, not here); ``cancel``
    stops it from the GUI thread; ``hosts``: the processes to run as, one per host."""
    on_hosts = {}
    if hosts is not None and hosts.multi:
        on_hosts = {"hosts": hosts.count, "dcn": hosts.dcn_text or None}

    def run() -> RunResult:
        from shardscope.backend.run.dispatch import run as run_request
        from shardscope.backend.run.request import RunRequest

        request = RunRequest(
            program,
            mesh,
            specs,
            timeout=timeout,
            propagation=propagation,
            cancel=cancel,
            **on_hosts,
        )
        return run_request(request).result

    return run


def reshard_task(mesh: Mesh, source: str, target: str, shape, dtype: str, timeout: float):
    """The function a reshard check runs: ``jax.device_put`` in a worker."""

    def run() -> dict:
        from shardscope.backend.run.reshard import check_reshard
        from shardscope.backend.sharding.spec import parse_spec

        return check_reshard(
            mesh, parse_spec(source), parse_spec(target), shape, dtype, timeout=timeout
        )

    return run


def warnings_by_op(result: RunResult, graph) -> dict[int, list[str]]:
    """The XLA warnings of ``result`` by the id of the program op each names (the compiled
    HLO's ``op_name`` names it from the top, as ``op_index.OpIndex`` finds ops in loop
    bodies, checkpoints, nested jits and callees too)."""
    from shardscope.backend.run.op_index import OpIndex

    ops = OpIndex(graph)
    out: dict[int, list[str]] = {}
    for w in result.warnings:
        op_id = ops.find(w.op_name) if w.op_name else None
        if op_id is not None:
            out.setdefault(op_id, []).append(w.message)
    return out


def warning_op(result: RunResult, index: int, graph) -> int | None:
    """The op warning ``index`` names, or None."""
    from shardscope.backend.run.op_index import OpIndex

    name = result.warnings[index].op_name
    return OpIndex(graph).find(name) if name else None


class DeviceRuns(QObject):
    """See the module docstring."""

    def __init__(
        self,
        session: Session,
        runner: TaskRunner,
        panel: RunPanel,
        selection: Selection,
        messages: MessagesView,
        status_bar: QStatusBar,
        *,
        show_dock: Callable[[], None] = lambda: None,
        make_room: Callable[[], None] = lambda: None,
        show_warnings: Callable[[dict[int, list[str]]], None] = lambda _by_op: None,
        reveal_op: Callable[[int], None] = lambda _op: None,
        allow_code: Callable[[Program], bool] = lambda program: needs_consent(program) is None,
        timeout: float = RUN_TIMEOUT_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.panel = panel
        self.selection = selection
        self.messages = messages
        self.status_bar = status_bar
        self.show_dock = show_dock
        self.make_room = make_room
        self.show_warnings = show_warnings
        self.reveal_op = reveal_op
        self.allow_code = allow_code
        self.timeout = timeout
        self.reshard_timeout = RESHARD_TIMEOUT_S
        self.checking = False  # a real reshard is under way
        self._closed = False
        self.running = False
        self.count = 0  # results shown so far
        self.failures = 0
        self._generation = 0
        self._cancel: Cancel | None = None
        self._status_before = ""  # the dock's status line before the run under way
        self.indicator = StatusBusy(
            status_bar.window(),
            action="Cancel the run",
            tooltip="Stop the run: its worker is killed, nothing changes (Esc)",
            cancel=self.cancel_run,
        )
        ind = self.indicator
        self.busy, self.busy_label, self.cancel_button = ind.bar, ind.label, ind.cancel_button
        self.cancel_action = ind.cancel_action
        panel.cancelRequested.connect(self.cancel_run)
        self._links = Connections()
        self._links.connect(session.events.program, self._on_program)
        panel.warningSelected.connect(self.show_warning)
        panel.reshard.runRequested.connect(self.check_reshard)
        panel.reshard.plan_async = self._plan_async

    def _show_busy(self, what: str | None) -> None:
        """The status bar's busy bar and Cancel while ``what`` runs (None: hide them)."""
        if what is None:
            self.indicator.hide()
        else:
            self.indicator.show(f"Running {what}… (Esc cancels)")

    def _finished(self) -> None:
        self.running = False
        self._cancel = None
        self._show_busy(None)
        self.panel.set_cancellable(False)

    def cancel_run(self) -> bool:
        """Stop the run under way: kill its worker (with whatever it started) and show the
        dock as it was before; False if no run was under way."""
        if not self.running or self._cancel is None:
            return False
        cancel = self._cancel
        self._generation += 1  # what the task still reports is not shown
        self._finished()
        cancel.cancel()
        self.panel.status.setText(self._status_before)
        self.messages.add("run cancelled: its worker was stopped; nothing changed", "info")
        self.status_bar.showMessage("the run was cancelled", 4000)
        return True

    def close(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()
        self._generation += 1
        self._closed = True
        self._links.close()

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
        if not self.allow_code(program):
            return
        self.running = True
        self._generation += 1
        generation = self._generation
        self._cancel = cancel = Cancel()
        hosts = session.hosts
        on_hosts = f" on {hosts.count} hosts" if hosts.multi else ""
        what = f"{program.name} on {mesh.size} devices{on_hosts}"
        if runs_module(program):
            what = (
                f"the module of {program.name} on {mesh.size} devices{on_hosts}, on seeded inputs"
            )
        self._status_before = self.panel.status.text()
        self.panel.set_running(what)
        self.panel.set_cancellable(True)
        self.show_dock()
        self._show_busy(what)
        self.status_bar.clearMessage()  # the busy bar's label says what runs
        fn = run_task(
            program,
            mesh,
            session.specs_for_propagation(),
            session.propagation,
            self.timeout,
            cancel,
            hosts,
        )

        def done(result: RunResult, seconds: float) -> None:
            if self._cancel is cancel:
                self._finished()
            if generation != self._generation:
                return
            self.show_result(result)
            ran_hosts = int(getattr(result, "hosts", 1) or 1)
            self.status_bar.showMessage(
                f"ran on {result.device_count} {result.platform.upper()} devices"
                + (f" on {ran_hosts} hosts" if ran_hosts > 1 else "")
                + f" in {seconds:.2f} s",
                4000,
            )

        def failed(message: str) -> None:
            if self._cancel is cancel:
                self._finished()
            if generation != self._generation:
                return
            self.failures += 1
            said = run_failed(message)
            self.panel.set_failed(said)
            self.show_dock()  # the dock that waited for the run says why
            self.messages.error(said)
            self.status_bar.showMessage("the run failed: the Run dock says why", 8000)

        self.runner.start(fn, done, failed)

    def show_result(self, result: RunResult) -> None:
        """Show a run's result: the dock, the notes, the warnings on their ops."""
        self.count += 1
        self.selection.clear_groups()
        self.panel.set_result(result)
        self.make_room()
        for note in result.notes:
            self.messages.add(f"run: {note}", "warning")
        if result.reference_kept:
            from shardscope.backend.run.reference_cache import KEPT

            self.messages.add(f"run: {KEPT}", "info")
        graph = self.session.graph
        self.show_warnings(warnings_by_op(result, graph) if graph is not None else {})

    def show_warning(self, index: int) -> None:
        """Select and reveal the op XLA warning ``index`` names."""
        result, graph = self.panel.result, self.session.graph
        if result is None or graph is None or not 0 <= index < len(result.warnings):
            return
        op = warning_op(result, index, graph)
        if op is None:
            self.messages.add(
                "this XLA warning names no op of the program: read it in the Run dock", "warning"
            )
            return
        self.reveal_op(op)

    def check_reshard(self) -> None:
        """Run the reshard view's move for real with ``jax.device_put`` in a worker."""
        view = self.panel.reshard
        plan, mesh = view.plan, view.mesh
        if plan is None or mesh is None:
            return
        if self.checking:
            self.messages.add("a reshard check is already running: wait for it", "warning")
            return
        self.checking = True
        view.set_checking()
        fn = reshard_task(
            mesh, plan.source, plan.target, plan.shape, view.dtype, self.reshard_timeout
        )

        def done(devices: dict, _seconds: float) -> None:
            self.checking = False
            if self._closed:
                return
            if not view.show_check(plan, devices):
                if plan is view.plan:
                    self.messages.add("the real reshard disagrees with the plan", "warning")

        def failed(message: str) -> None:
            self.checking = False
            if self._closed:
                return
            view.show_check_failed(message)
            self.messages.error(f"reshard check failed: {message}")

        self.runner.start(fn, done, failed)

    def _plan_async(self, fn, on_done, on_failed) -> None:
        """Plan a reshard of a large mesh in the thread pool (pure Python, no worker)."""

        def done(plan, _seconds: float) -> None:
            if not self._closed:
                on_done(plan)

        def failed(message: str) -> None:
            if not self._closed:
                on_failed(message)

        self.runner.start(fn, done, failed)

    def _on_program(self, _program) -> None:
        self._generation += 1  # a run of the previous program is not shown
        self.selection.clear_groups()
        self.show_warnings({})
