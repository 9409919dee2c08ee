"""Expand all and collapse all without freezing the window.

``FoldProgress`` makes the window's graph views build large drawings in slices (their
layouts computed in the window's task pool, see ``GraphView.show_state``), and shows
while one is on its way: a busy bar and what is being done in the status bar, with a
Cancel button; Esc cancels too. The view keeps its old drawing until the new one is
whole, so a cancelled or dropped job changes nothing; a job is dropped when the user
changes what the view shows meanwhile (edits to specs are not lost: the new drawing
shows them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QObject

from shardscope.app.window.busy import StatusBusy
from shardscope.viewers.common.connections import Connections

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from shardscope.app.window.tasks import TaskRunner
    from shardscope.viewers.common.messages import MessagesView
    from shardscope.viewers.graph.view import GraphView

OUTCOMES = {
    "cancelled": "cancelled",
    "dropped": "dropped: the view changed meanwhile",
}


class FoldProgress(QObject):
    """See the module docstring; ``watch(view)`` for each graph view of the window."""

    def __init__(self, window: QMainWindow, runner: TaskRunner, messages: MessagesView) -> None:
        super().__init__(window)
        self.window = window
        self.runner = runner
        self.messages = messages
        self.views: list[GraphView] = []
        self._links: dict[GraphView, Connections] = {}  # each watched view's
        self.what = ""
        self.last = ""  # what the status bar said when the last job ended
        self._clock = QElapsedTimer()
        self.indicator = StatusBusy(
            window,
            action="Cancel expand/collapse all",
            tooltip="Stop drawing: the graph stays as it is (Esc)",
            cancel=self.cancel,
        )
        ind = self.indicator
        self.busy, self.label, self.cancel_button = ind.bar, ind.label, ind.cancel_button
        self.cancel_action = ind.cancel_action

    def watch(self, view: GraphView) -> None:
        """Build ``view``'s large drawings in slices, shown here while on their way."""
        view.runner = self.runner.start
        view.in_slices = True
        links = self._links[view] = Connections()
        links.connect(view.foldStarted, self._started)
        links.connect(view.foldEnded, self._ended)
        self.views.append(view)

    def unwatch(self, view: GraphView) -> None:
        if view not in self.views:
            return
        self.views.remove(view)
        view.cancel_fold("cancelled")
        self._links.pop(view).close()

    @property
    def running(self) -> bool:
        return any(view.folding for view in self.views)

    def cancel(self) -> bool:
        """Stop every drawing on its way; False if there was none."""
        cancelled = False
        for view in list(self.views):
            cancelled = view.cancel_fold("cancelled") or cancelled
        return cancelled

    def _started(self, what: str) -> None:
        if not self.indicator.showing:  # the first of the jobs shown together
            self._clock.start()
            self.what = what
        self.indicator.show(f"{what}… (Esc cancels)")

    def _ended(self, outcome: str) -> None:
        if self.running:
            return
        self.indicator.hide()
        seconds = self._clock.elapsed() / 1000.0
        if outcome == "done":
            self.last = f"{self.what}: done in {seconds:.2f} s"
        elif outcome in OUTCOMES:
            self.last = f"{self.what}: {OUTCOMES[outcome]}"
        else:
            self.last = f"{self.what} failed: {outcome}"
            self.messages.error(self.last)
        self.window.statusBar().showMessage(self.last, 4000)
