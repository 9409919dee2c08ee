"""The window's XLA compile of each propagation: the compiled collectives and memory.

``WindowCompiler`` compiles the annotated module of every propagation the window runs
(the program with the session's mesh and specs written on it) on as many fake CPU
devices as the mesh has, in a worker (``run.compiled.PendingCompile``). When the report
comes, ``run.compiled.read_compile`` reads it in a thread of its own, off the GUI
thread, and on the GUI thread the session keeps it (``Session.set_compiled``).

When each step happens is chosen for the badges' sake (``tests/benchmarks/
bench_window_compile.py`` measures every order). On a machine with two cores, a worker
started with the edit (importing JAX while Shardy runs) and given the module at once slowed
the badges of the 24-layer transformer from 1.9x to 3.3x Shardy's pipeline alone. So a
worker is started ahead of the edit: once a compile is done, the next one's worker
(``spare``) imports JAX while the window is idle and waits for its module. An edit takes
it (the same device count and limit), else starts one once the badges show; the module
goes to it once the badges show (the server writes it after the final shardings;
``module_at_once``: before Shardy runs), and the worker runs niced. Measured so, the
badges come as fast as with no compile at all, and the compiled collectives in 0.5x-0.7x
the bare work (Shardy's pipeline plus one default XLA compile).

While it runs, the status bar says for how long it has and, from the module's size, an
estimate of how long it will (``early_stop.estimate_s``: said to be an estimate). A
compile estimated long is given so that it can stop early (``PendingCompile.stop_early``):
its Stop early button ends it once XLA has partitioned the module, with the same
collectives and no memory.

A newer propagation, another program, closing the window or Cancel ends the compile
under way at once: its worker is killed, and what it would have reported is never
applied, to its result or any other. A compile that fails leaves its one-line reason in
the session's analysis (a ``NotCompiled``, ``Analysis.compile_error``) and in Messages. A
mesh over ``MAX_CPU_DEVICES`` is not compiled: the analysis gets the note the command
line gives.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QStatusBar, QToolButton

from shardscope.app.window.busy import StatusBusy
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.run.cancel import RunCancelled
from shardscope.backend.run.compiled import (
    COMPILE_CANCELLED,
    MAX_CPU_DEVICES,
    PendingCompile,
    read_compile,
    too_many_devices,
)
from shardscope.backend.run.early_stop import estimate_s, worth_stopping
from shardscope.backend.run.result import CompileOutcome, NotCompiled
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.messages import MessagesView

# The limit of one compile, counted from when its module is given, and what a user who
# needs more does.
COMPILE_TIMEOUT_S = 300.0
TIMEOUT_FIX = (
    "list the compiled collectives on the command line, which allows more: "
    "python main.py propagate PROGRAM --timeout 900"
)


class _Spare:
    """A compile worker started ahead of the edit that will use it."""

    def __init__(self, devices: int, timeout: float) -> None:
        self.devices, self.timeout = devices, timeout
        self.pending = PendingCompile(devices, timeout, background=True, timeout_fix=TIMEOUT_FIX)


class CompileJob:
    """One propagation's compile: its worker and the module it gets.

    ``module`` and ``final`` may be called from any thread. The worker is ``spare``
    where one was ready, else started at once (``worker_at_edit``) or once the
    propagation's final shardings came (``final``); the module goes to it as soon as
    both are there (``module_at_once``) or once the final shardings came.
    """

    def __init__(
        self,
        generation: int,
        mesh: Mesh,
        timeout: float,
        *,
        spare: PendingCompile | None = None,
        worker_at_edit: bool = False,
        module_at_once: bool = False,
    ) -> None:
        self.generation = generation
        self.devices = mesh.size
        self.device_order = mesh.device_order
        self.timeout = timeout
        self.started_at = time.perf_counter()
        self.pending = spare
        self.from_spare = spare is not None
        self.cancelled = False  # by the user (Cancel), not by a newer edit
        self.result: PropagationResult | None = None  # the propagation's, once it came
        self.given_at: float | None = None
        # the module's size once given, and whether it can stop early (``stop_early``)
        self.module_bytes: int | None = None
        self.stoppable = False
        self.stopping = False  # asked to stop early
        self._worker_at_edit = worker_at_edit
        self._module_at_once = module_at_once
        self._text: str | None = None
        self._final = False
        self._ended = False
        self._lock = threading.Lock()
        with self._lock:
            self._advance()

    def module(self, text: str | None) -> None:
        """The annotated module, once the propagation wrote it."""
        with self._lock:
            self._text = text
            self._advance()

    def final(self) -> None:
        """The propagation's final shardings came (the badges show them)."""
        with self._lock:
            self._final = True
            self._advance()

    def _advance(self) -> None:
        if self._ended:
            return
        if self.pending is None and (self._worker_at_edit or self._final):
            self.pending = PendingCompile(
                self.devices, self.timeout, background=True, timeout_fix=TIMEOUT_FIX
            )
        ready = self._module_at_once or self._final
        if self.pending is not None and self._text is not None and ready:
            self.module_bytes = len(self._text.encode())
            self.stoppable = worth_stopping(self.module_bytes)
            self.given_at = time.perf_counter()
            self.pending.give(self._text, self.device_order, stoppable=self.stoppable)
            self._text = None

    def stop_early(self) -> bool:
        """End the compile once XLA's partitioned module is final; False where it
        cannot be (a compile estimated short is not dumped)."""
        with self._lock:
            pending = self.pending
        self.stopping = pending is not None and pending.stop_early()
        return self.stopping

    def progress(self) -> str:
        """How far along the compile is: its elapsed seconds and, once its module is
        given, the estimate of its length from the module's size."""
        now = time.perf_counter()
        given, size = self.given_at, self.module_bytes
        if given is None or size is None:
            return f"{now - self.started_at:.0f} s, waiting for the final shardings"
        elapsed = now - given
        estimate = estimate_s(size, dumping=self.stoppable)
        mb = f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.0f} kB"
        if elapsed <= estimate:
            said = f"{elapsed:.0f} s of about {estimate:.0f} s"
        else:
            said = f"{elapsed:.0f} s, longer than the estimated {estimate:.0f} s"
        return f"{said} (an estimate from the module's size, {mb})"

    def report(self) -> dict:
        """The worker's report (``PendingCompile.report``), once the final shardings came."""
        with self._lock:
            pending = self.pending
        if pending is None:
            raise RunCancelled(COMPILE_CANCELLED)
        return pending.report()

    def cancel(self) -> None:
        """End the worker now; what it reports is dropped."""
        with self._lock:
            self._ended = True
            pending = self.pending
        if pending is not None:
            pending.cancel()

    def wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for an ended worker to be reaped."""
        with self._lock:
            pending = self.pending
        if pending is not None:
            pending.wait(timeout)


class WindowCompiler(QObject):
    """Compiles each of one session's propagations; see the module docstring."""

    # (job, result, its CompileOutcome), emitted by the thread that reads the report
    _attached = Signal(object, object, object)
    # a compile failed (not cancelled): its one line, which the Collectives dock shows
    compileFailed = Signal(str)

    def __init__(
        self,
        session: Session,
        messages: MessagesView,
        status_bar: QStatusBar,
        *,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.messages = messages
        self.status_bar = status_bar
        self.timeout = COMPILE_TIMEOUT_S
        # The orders ``bench_window_compile`` compares; see the module docstring.
        self.spare = True
        self.worker_at_edit = False
        self.module_at_once = False
        self.count = 0  # compiles applied to the session (failed ones included)
        self.job: CompileJob | None = None
        self._spare: _Spare | None = None
        self._closed = False
        self.stop_button = QToolButton()
        self.stop_button.setText("Stop early")
        self.stop_button.setToolTip(
            "Stop XLA's compile once it has partitioned the module (about halfway): the "
            "compiled collectives are listed, the memory is not"
        )
        self.stop_button.clicked.connect(self.stop_early)
        self.indicator = StatusBusy(
            status_bar.window(),
            action="Cancel the compile",
            tooltip="Stop XLA's compile: the shardings stay, the compiled collectives are "
            "not listed",
            cancel=self.cancel,
            esc=False,  # it follows every edit: Esc stays the window's
            extra=self.stop_button,
        )
        self._what = ""
        # the indicator's seconds, once a second while a compile runs
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        self._attached.connect(self._on_attached)

    @property
    def compiling(self) -> bool:
        """Whether a compile is under way."""
        return self.job is not None

    @property
    def spare_pending(self) -> PendingCompile | None:
        """The worker started ahead of the next edit, if one is."""
        return self._spare.pending if self._spare is not None else None

    def start(self, generation: int, mesh: Mesh) -> CompileJob | None:
        """A compile for the propagation ``generation`` starts, which ends the one under
        way; None where the mesh is over ``MAX_CPU_DEVICES`` (not compiled)."""
        self.end()
        if self._closed:
            return None
        spare = self._take_spare(mesh.size)  # one for another device count ends
        if not 0 < mesh.size <= MAX_CPU_DEVICES:
            return None
        self.job = CompileJob(
            generation,
            mesh,
            self.timeout,
            spare=spare,
            worker_at_edit=self.worker_at_edit,
            module_at_once=self.module_at_once,
        )
        self._what = f"compiling for {mesh.size} devices"
        self.indicator.show(f"{self._what}…")
        self._ticker.start()
        return self.job

    def _tick(self) -> None:
        job = self.job
        if job is None:
            self._ticker.stop()
            return
        what = "stopping once XLA has partitioned the module" if job.stopping else self._what
        self.indicator.show(f"{what}: {job.progress()}")
        self.stop_button.setVisible(job.stoppable and not job.stopping)

    def stop_early(self) -> bool:
        """Stop the compile under way once XLA has partitioned the module: its
        collectives come, its memory does not. False if none can stop so."""
        job = self.job
        if job is None or not job.stop_early():
            return False
        self._tick()
        return True

    def _take_spare(self, devices: int) -> PendingCompile | None:
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        if spare.devices == devices and spare.timeout == self.timeout:
            return spare.pending
        spare.pending.cancel()
        return None

    def _start_spare(self, devices: int) -> None:
        if self.spare and not self._closed and self._spare is None:
            self._spare = _Spare(devices, self.timeout)

    def note_for(self, mesh: Mesh) -> str | None:
        """The note a result on ``mesh`` gets when it is not compiled; None if it is."""
        return too_many_devices(mesh.size) if mesh.size > MAX_CPU_DEVICES else None

    def propagated(self, job: CompileJob, result: PropagationResult) -> None:
        """``result``, the session's propagation now, is ``job``'s: fill it in once the
        report comes (a thread of its own waits, then attaches)."""
        if job is not self.job:
            return
        job.result = result
        if job.cancelled:
            self._applied(job, result, NotCompiled(COMPILE_CANCELLED))
            return
        job.final()  # where no final shardings came ahead of the result
        threading.Thread(
            target=self._attach, args=(job, result), name="xla-attach", daemon=True
        ).start()

    def _attach(self, job: CompileJob, result: PropagationResult) -> None:
        outcome: CompileOutcome | None = None
        try:
            outcome = read_compile(result, job.report())
        except RunCancelled:
            if not job.cancelled:
                return  # a newer edit ended it: nobody waits for it
            outcome = NotCompiled(COMPILE_CANCELLED)
        except ShardscopeError as exc:
            outcome = NotCompiled(_one_line(str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug must not take the window down
            outcome = NotCompiled(_one_line(f"{type(exc).__name__}: {exc}"))
        try:
            self._attached.emit(job, result, outcome)
        except RuntimeError:
            pass  # the window closed meanwhile: nobody is left to tell

    def _on_attached(
        self, job: CompileJob, result: PropagationResult, outcome: CompileOutcome
    ) -> None:
        if job is self.job and result is self.session.propagation:
            self._applied(job, result, outcome)

    def _applied(self, job: CompileJob, result: PropagationResult, outcome: CompileOutcome) -> None:
        self.job = None
        self._ticker.stop()
        self.indicator.hide()
        if result is not self.session.propagation:
            return
        self.count += 1
        if isinstance(outcome, NotCompiled):
            error = outcome.reason
            if error == COMPILE_CANCELLED:
                self.messages.add(f"{error}: the compiled collectives are not listed", "info")
                self.status_bar.showMessage("the compile was cancelled", 4000)
            else:
                said = error if "XLA" in error else f"the XLA compile failed: {error}"
                self.messages.add(said, "warning")
                self.status_bar.showMessage(
                    "the XLA compile failed: the Collectives dock says why", 8000
                )
        else:
            # From the edit: what the user waited for.
            seconds = time.perf_counter() - job.started_at
            early = " (stopped early: no memory)" if outcome.early_stopped else ""
            self.status_bar.showMessage(f"compiled in {seconds:.2f} s{early}", 4000)
            self._start_spare(job.devices)
        self.session.set_compiled(result, outcome)
        if isinstance(outcome, NotCompiled) and outcome.reason != COMPILE_CANCELLED:
            self.compileFailed.emit(outcome.reason)

    def failed(self, job: CompileJob | None) -> None:
        """``job``'s propagation failed or was superseded: its compile ends."""
        if job is not None and job is self.job:
            self.end()

    def cancel(self) -> bool:
        """Cancel: end the compile under way; its result, once here, says so. False if
        none was under way."""
        job = self.job
        if job is None:
            return False
        job.cancelled = True
        job.cancel()
        self._ticker.stop()
        self.indicator.hide()
        if job.result is not None:
            self._applied(job, job.result, NotCompiled(COMPILE_CANCELLED))
        return True

    def end(self) -> None:
        """End the compile under way, if any, reporting nothing."""
        job, self.job = self.job, None
        if job is not None:
            job.cancel()
        self._ticker.stop()
        self.indicator.hide()

    def close(self, wait: float = 10.0) -> None:
        """Compile no more: the compile under way and the spare worker end, and their
        processes are gone on return."""
        self._closed = True
        job, self.job = self.job, None
        spare, self._spare = self._spare, None
        if job is not None:
            job.cancel()
        if spare is not None:
            spare.pending.cancel()
        # Each worker is killed; its thread reaps it.
        if job is not None:
            job.wait(wait)
        if spare is not None:
            spare.pending.wait(wait)
        self._ticker.stop()
        self.indicator.hide()


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "the XLA compile failed"
