"""GSPMD's shardings of the session's program, compared with Shardy's in the background.

``GspmdComparer`` runs ``gspmd.compare.compare_gspmd`` on the session's propagation while
its toggle is on (the GSPMD dock and the graph's marks show the differences) or the
side-by-side panes want GSPMD's shardings, and again after each propagation; a result
that arrives after a newer comparison started is dropped. ``compared`` tells when
``differences`` holds the comparison of ``compared_for``, the current result.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QStatusBar

from shardscope.app.window.docks import Docks
from shardscope.app.window.tasks import TaskRunner
from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.gspmd.compare import Difference, GspmdComparison, compare_gspmd
from shardscope.backend.program.load import Program
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.session.document import Session
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.debugger.gspmd import GspmdView
from shardscope.viewers.graph.markers import GraphMarkers


def gspmd_task(program: Program, result: PropagationResult) -> Callable[[], GspmdComparison]:
    """The function the comparison task runs: GSPMD's differences, compiled collectives
    and warnings (``compare_gspmd``)."""
    return lambda: compare_gspmd(program, result)


class GspmdComparer(QObject):
    """Compares GSPMD's shardings with Shardy's in the background; see the module
    docstring."""

    compared = Signal()

    def __init__(
        self,
        session: Session,
        runner: TaskRunner,
        docks: Docks,
        markers: GraphMarkers,
        messages: MessagesView,
        status_bar: QStatusBar,
    ) -> None:
        """``docks``: the window's, whose GSPMD dock shows the comparison."""
        super().__init__()
        self.session = session
        self.runner = runner
        self.docks = docks
        self.view = docks.widget("dock_gspmd", GspmdView)
        self.markers = markers
        self.messages = messages
        self.status_bar = status_bar
        self.on = False  # the toggle: the dock and the graph's marks show the comparison
        self.wanted = False  # the side-by-side panes show GSPMD's shardings
        self.compared_for: PropagationResult | None = None  # the result last compared
        self.differences: list[Difference] | None = None  # GSPMD's, for ``compared_for``
        self.failed_for: PropagationResult | None = None  # not tried again for it
        self._in_flight = 0  # comparison tasks started and not yet reported
        self._generation = 0
        self._links = Connections()
        self._links.connect(session.events.propagation, self._on_propagation)
        self._links.connect(session.events.compiled, self._on_compiled)

    def close(self) -> None:
        """Stop following the session (a comparison under way is dropped when it ends)."""
        self._links.close()
        self._generation += 1

    @property
    def comparing(self) -> bool:
        """Whether a GSPMD comparison is running (its worker is cancelled on quit)."""
        return self._in_flight > 0

    def set_on(self, on: bool) -> None:
        """Turn the GSPMD comparison on (runs now, and after each propagation) or off."""
        self.on = bool(on)
        if self.on:
            self.docks.show("dock_gspmd")
            self._compare(self.session.propagation)
        else:
            self.markers.set_gspmd(None)
            self.view.set_off()
            if not self.wanted:
                self._generation += 1
                self.compared_for = None
                self.differences = None

    def want(self, on: bool) -> None:
        """The side-by-side panes need GSPMD's shardings (``on``): compare now unless the
        current result was compared already or is being compared, and after each
        propagation; the dock and the graph's marks follow the toggle only."""
        self.wanted = bool(on)
        if not on or self.on:
            return
        result = self.session.propagation
        if result is not None and (
            self.compared_for is result or self.failed_for is result or self.comparing
        ):
            return
        self._compare(result)

    def _on_propagation(self, result: PropagationResult | None) -> None:
        if self.on or self.wanted:
            self._compare(result)

    def _on_compiled(self, analysis: Analysis) -> None:
        if self.compared_for is analysis.propagation:
            self.view.set_shardy(analysis.compiled_collectives)

    def _compare(self, result: PropagationResult | None) -> None:
        self._generation += 1
        generation = self._generation
        self.markers.set_gspmd(None)
        self.differences = None
        program = self.session.program
        if result is None or program is None:
            self.compared_for = None
            if self.on:
                self.view.set_waiting()
            return
        if self.on:
            self.view.set_running()
        self._in_flight += 1

        def done(comparison: GspmdComparison, seconds: float) -> None:
            self._in_flight -= 1
            if generation == self._generation and self.session.propagation is result:
                self._show(result, comparison, seconds)

        def failed(message: str) -> None:
            self._in_flight -= 1
            if generation != self._generation:
                return
            self.failed_for = result
            if self.on:
                self.view.set_failed(message)
            self.messages.error(f"GSPMD comparison failed: {message}")
            self.compared.emit()

        self.runner.start(gspmd_task(program, result), done, failed)

    def _show(self, result: PropagationResult, comparison: GspmdComparison, seconds: float) -> None:
        """Keep the comparison of ``result``, the current propagation, and show it where
        the toggle is on."""
        differences = comparison.differences
        self.compared_for = result
        self.differences = differences
        self.session.set_gspmd(result, comparison)
        if self.on:
            analysis = self.session.analysis
            compiled = (
                analysis.compiled_collectives
                if analysis is not None and analysis.propagation is result
                else None
            )
            self.view.set_differences(differences, comparison.collectives, compiled)
            self.markers.set_gspmd(differences)
        for warning in comparison.warnings:
            self.messages.add(warning, "warning")
        n = len(differences)
        self.status_bar.showMessage(
            f"GSPMD compared in {seconds:.2f} s: {n} value{'s' if n != 1 else ''} differ", 4000
        )
        self.compared.emit()
