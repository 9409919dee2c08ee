"""The window's XLA compile of each propagation: the compiled collectives and memory.

``WindowCompiler`` compiles the annotated module of every propagation the window runs
(the program with the session's mesh and specs written on it) on as many fake CPU
devices as the mesh has, in a worker (``run.compiled.PendingCompile``). The worker starts
with the propagation, so it imports JAX while Shardy runs; the module goes to it as soon
as it is known (``CompileJob.module``), or once the badges show (``after_final``). When
the report comes, ``run.compiled.attach`` fills the result in a thread of its own, off
the GUI thread, and on the GUI thread the session hears of it (``Session.set_compiled``).

A newer propagation, another program, closing the window or Cancel ends the
compile under way at once: its worker is killed, and what it would have reported is
never applied, to its result or any other. A compile that fails leaves its one-line
reason on the result (``compile_error``) and in Messages. A mesh over
``MAX_CPU_DEVICES`` is not compiled: the result gets the note the command line gives.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QStatusBar

from shardscope.app.window.busy import StatusBusy
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.run.cancel import RunCancelled
from shardscope.backend.run.compiled import (
    COMPILE_CANCELLED,
    MAX_CPU_DEVICES,
    PendingCompile,
    attach,
    too_many_devices,
)
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.messages import MessagesView

# The limit of one compile, counted from when its module is given.
COMPILE_TIMEOUT_S = 300.0


class CompileJob:
    """One propagation's compile: its worker, started at once, and the module it gets.

    ``module`` and ``final`` may be called from any thread; the module goes to the
    worker at once, or (``after_final``) once the propagation's final shardings came.
    """

    def __init__(self, generation: int, devices: int, timeout: float, after_final: bool) -> None:
        self.generation = generation
        self.devices = devices
        self.after_final = after_final
        self.started_at = time.perf_counter()
        self.pending = PendingCompile(devices, timeout)
        self.cancelled = False  # by the user (Cancel), not by a newer edit
        self.result: PropagationResult | None = None  # the propagation's, once it came
        self.given_at: float | None = None
        self._text: str | None = None
        self._final = not after_final
        self._lock = threading.Lock()

    def module(self, text: str | None) -> None:
        """The annotated module, once the propagation wrote it."""
        with self._lock:
            self._text = text
        self._give()

    def final(self) -> None:
        """The propagation's final shardings came (the badges show them)."""
        with self._lock:
            self._final = True
        self._give()

    def _give(self) -> None:
        with self._lock:
            if self.given_at is not None or self._text is None or not self._final:
                return
            self.given_at = time.perf_counter()
            text, self._text = self._text, None
        self.pending.give(text)

    def cancel(self) -> None:
        """End the worker now; what it reports is dropped."""
        self.pending.cancel()


class WindowCompiler(QObject):
    """Compiles each of one session's propagations; see the module docstring."""

    # (job, result, one-line error or None), emitted by the attaching thread
    _attached = Signal(object, object, object)

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
        # Give the module only once the badges show, rather than as soon as it is known.
        self.after_final = False
        self.count = 0  # compiles applied to the session (failed ones included)
        self.job: CompileJob | None = None
        self._closed = False
        self.indicator = StatusBusy(
            status_bar.window(),
            action="Cancel the compile",
            tooltip="Stop XLA's compile: the shardings stay, the compiled collectives are "
            "not listed",
            cancel=self.cancel,
            esc=False,  # it follows every edit: Esc stays the window's
        )
        self._attached.connect(self._on_attached)

    @property
    def compiling(self) -> bool:
        """Whether a compile is under way."""
        return self.job is not None

    def start(self, generation: int, mesh: Mesh) -> CompileJob | None:
        """A compile for the propagation ``generation`` starts, which ends the one under
        way; None where the mesh is over ``MAX_CPU_DEVICES`` (not compiled)."""
        self.end()
        if self._closed or not 0 < mesh.size <= MAX_CPU_DEVICES:
            return None
        self.job = CompileJob(generation, mesh.size, self.timeout, self.after_final)
        self.indicator.show(f"compiling for {mesh.size} devices…")
        return self.job

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
            self._applied(job, result, COMPILE_CANCELLED)
            return
        job.final()  # where no final shardings came ahead of the result
        threading.Thread(
            target=self._attach, args=(job, result), name="xla-attach", daemon=True
        ).start()

    def _attach(self, job: CompileJob, result: PropagationResult) -> None:
        error: str | None = None
        try:
            attach(result, job.pending.report())
        except RunCancelled:
            if not job.cancelled:
                return  # a newer edit ended it: nobody waits for it
            error = COMPILE_CANCELLED
        except ShardscopeError as exc:
            error = _one_line(str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not take the window down
            error = _one_line(f"{type(exc).__name__}: {exc}")
        try:
            self._attached.emit(job, result, error)
        except RuntimeError:
            pass  # the window closed meanwhile: nobody is left to tell

    def _on_attached(self, job: CompileJob, result: PropagationResult, error: str | None) -> None:
        if job is self.job and result is self.session.propagation:
            self._applied(job, result, error)

    def _applied(self, job: CompileJob, result: PropagationResult, error: str | None) -> None:
        self.job = None
        self.indicator.hide()
        if result is not self.session.propagation:
            return
        self.count += 1
        if error is not None:
            result.compile_error = error
            if error == COMPILE_CANCELLED:
                self.messages.add(f"{error}: the compiled collectives are not listed", "info")
            else:
                said = error if "XLA" in error else f"the XLA compile failed: {error}"
                self.messages.add(said, "warning")
            self.status_bar.showMessage(
                "the compile was cancelled"
                if error == COMPILE_CANCELLED
                else "the compile failed (see Messages)",
                4000,
            )
        else:
            # From the edit: the worker started with the propagation.
            seconds = time.perf_counter() - job.started_at
            self.status_bar.showMessage(f"compiled in {seconds:.2f} s", 4000)
        self.session.set_compiled(result)

    def failed(self, job: CompileJob | None) -> None:
        """``job``'s propagation failed or was superseded: its compile ends."""
        if job is not None and job is self.job:
            self.end()

    def cancel(self) -> bool:
        """Cancel: end the compile under way; its result, once here, says so. False
        if none was under way."""
        job = self.job
        if job is None:
            return False
        job.cancelled = True
        job.cancel()
        self.indicator.hide()
        if job.result is not None:
            self._applied(job, job.result, COMPILE_CANCELLED)
        return True

    def end(self) -> None:
        """End the compile under way, if any, reporting nothing."""
        job, self.job = self.job, None
        if job is not None:
            job.cancel()
        self.indicator.hide()

    def close(self, wait: float = 10.0) -> None:
        """Compile no more: the compile under way ends, its worker is gone on return."""
        self._closed = True
        job, self.job = self.job, None
        if job is not None:
            job.cancel()
            job.pending.wait(wait)  # the worker is killed; its thread reaps it
        self.indicator.hide()


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "the XLA compile failed"
