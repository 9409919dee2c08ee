"""When the window propagates: on demand (F5), or shortly after each edit while automatic.

``PropagationScheduler`` debounces edits with a single-shot timer, runs propagation on the
session's current mesh and specs in the thread pool, and hands the result to the session;
a result that arrives after a newer run started is dropped.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QStatusBar

from shardscope.app.window.settings import Settings
from shardscope.app.window.tasks import TaskRunner, propagate_task
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView

PROPAGATE_DELAY_MS = 150
MAX_WARNINGS_SHOWN = 5


class PropagationScheduler(QObject):
    """Runs propagation for one session; see the module docstring."""

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

    @property
    def pending(self) -> bool:
        """Whether an edit's propagation is still waiting for the debounce timer."""
        return self.timer.isActive()

    def schedule(self) -> None:
        """After an edit: propagate once edits pause, if automatic and a program is open."""
        if self.auto and self.session.program is not None:
            self.timer.start()

    def set_auto(self, on: bool) -> None:
        """Turn propagation after each edit on or off (remembered in the settings)."""
        self.auto = bool(on)
        self.settings.set_auto_propagate(self.auto)
        self.schedule()

    def stop(self) -> None:
        self.timer.stop()

    def propagate_now(self) -> None:
        """Run propagation on the current mesh and specs in the pool."""
        session = self.session
        if session.program is None or session.mesh is None:
            return
        self._generation += 1
        generation = self._generation
        fn = propagate_task(session.program, session.mesh, session.specs_for_propagation())

        def done(result: PropagationResult, seconds: float) -> None:
            if generation != self._generation:
                return
            self.count += 1
            session.set_propagation(result)
            for warning in result.warnings[:MAX_WARNINGS_SHOWN]:
                self.messages.add(warning, "warning")
            self.status_bar.showMessage(f"propagated in {seconds:.2f} s", 4000)

        def failed(message: str) -> None:
            if generation == self._generation:
                self.messages.error(f"propagation failed: {message}")

        self.runner.start(fn, done, failed)
