"""GSPMD's shardings of the session's program, compared with Shardy's in the background.

``GspmdComparer`` runs ``gspmd.compare.compare_gspmd`` on the session's propagation while
its toggle is on (the graph's marks show the differences) or the side-by-side panes want
GSPMD's shardings, and again after each propagation; a result that arrives after a newer
comparison started is dropped. ``compared`` tells when ``differences`` holds the
comparison of ``compared_for``, the current result. The GSPMD dock shows the comparison
whenever one is wanted, by the toggle or by the panes, and says "Off" only when neither
wants one; its headers name the program's partitioners (``viewers.common.partitioners``).
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
from shardscope.viewers.common.partitioners import partitioners
from shardscope.viewers.debugger.gspmd import ON_GRAPH, ON_PANES, GspmdView
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
        self.on = False  # the toggle: the graph's marks (and the dock) show the comparison
        self.wanted = False  # the side-by-side panes show GSPMD's shardings
        self.compared_for: PropagationResult | None = None  # the result last compared
        self.differences: list[Difference] | None = None  # GSPMD's, for ``compared_for``
        self.comparison: GspmdComparison | None = None  # the whole of it
        self.failed_for: PropagationResult | None = None  # not tried again for it
        self.failure = ""  # why it failed for ``failed_for``
        self._in_flight = 0  # comparison tasks started and not yet reported
        self._generation = 0
        self._links = Connections()
        self._links.connect(session.events.propagation, self._on_propagation)
        self._links.connect(session.events.compiled, self._on_compiled)
        self._links.connect(session.events.program, self._on_program)
        self._on_program(session.program)

    def close(self) -> None:
        """Stop following the session (a comparison under way is dropped when it ends)."""
        self._links.close()
        self._generation += 1

    @property
    def comparing(self) -> bool:
        """Whether a GSPMD comparison is running (its worker is cancelled on quit)."""
        return self._in_flight > 0

    @property
    def shown(self) -> bool:
        """Whether the GSPMD dock shows the comparison: the toggle is on, or the
        side-by-side panes show GSPMD's shardings."""
        return self.on or self.wanted

    def set_on(self, on: bool) -> None:
        """Turn the GSPMD comparison on (shows the current result's, comparing it unless
        the panes had it compared already, and compares after each propagation) or off."""
        self.on = bool(on)
        if self.on:
            self.docks.show("dock_gspmd")
            result = self.session.propagation
            if result is not None and self.compared_for is result and self.comparison is not None:
                self._display(result, self.comparison)
            else:
                self._compare(result)
        else:
            self.markers.set_gspmd(None)
            if self.wanted:
                self._display_state()  # the panes still show it
            else:
                self.view.set_off()
                self._generation += 1
                self.compared_for = None
                self.differences = None
                self.comparison = None

    def want(self, on: bool) -> None:
        """The side-by-side panes need GSPMD's shardings (``on``): compare now unless the
        current result was compared already or is being compared, and after each
        propagation; the graph's marks follow the toggle only, the dock either."""
        shown, wanted = self.shown, self.wanted
        self.wanted = bool(on)
        if self.on:
            if wanted != self.wanted:
                self._display_state()  # the dock says where the differences are marked
            return
        if shown == self.shown:
            return
        if not on:
            self.view.set_off()
            return
        result = self.session.propagation
        if result is not None and (
            self.compared_for is result or self.failed_for is result or self.comparing
        ):
            self._display_state()
            return
        self._compare(result)

    def _display_state(self) -> None:
        """Show in the dock where the comparison of the current result stands."""
        result = self.session.propagation
        if result is None:
            self.view.set_waiting()
        elif self.compared_for is result and self.comparison is not None:
            self._display(result, self.comparison)
        elif self.failed_for is result:
            self.view.set_failed(self.failure)
        elif self.comparing:
            self.view.set_running()

    def _on_program(self, program) -> None:
        names = partitioners(program)
        self.view.set_names(names)
        self.docks["dock_gspmd"].setWindowTitle(names.title)

    def _on_propagation(self, result: PropagationResult | None) -> None:
        if self.shown:
            self._compare(result)

    def _on_compiled(self, analysis: Analysis) -> None:
        if self.compared_for is analysis.propagation:
            self.view.set_compiled(analysis.compiled_collectives, analysis.compiled_by)

    def _compare(self, result: PropagationResult | None) -> None:
        self._generation += 1
        generation = self._generation
        self.markers.set_gspmd(None)
        self.differences = None
        program = self.session.program
        if result is None or program is None:
            self.compared_for = None
            if self.shown:
                self.view.set_waiting()
            return
        if self.shown:
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
            self.failure = message
            if self.shown:
                self.view.set_failed(message)
            self.messages.error(f"GSPMD comparison failed: {message}")
            self.compared.emit()

        self.runner.start(gspmd_task(program, result), done, failed)

    def _show(self, result: PropagationResult, comparison: GspmdComparison, seconds: float) -> None:
        """Keep the comparison of ``result``, the current propagation, and show it where
        it is wanted."""
        differences = comparison.differences
        self.compared_for = result
        self.differences = differences
        self.comparison = comparison
        self.session.set_gspmd(result, comparison)
        if self.shown:
            self._display(result, comparison)
        for warning in comparison.warnings:
            self.messages.add(warning, "warning")
        n = len(differences)
        names = self.view.names
        self.status_bar.showMessage(
            f"{names.gspmd} compared with {names.shardy} in {seconds:.2f} s: "
            f"{n} value{'s' if n != 1 else ''} differ",
            4000,
        )
        self.compared.emit()

    def _display(self, result: PropagationResult, comparison: GspmdComparison) -> None:
        """Show ``comparison``, of ``result``, in the dock, and on the graph where the
        toggle is on."""
        analysis = self.session.analysis
        mine = analysis is not None and analysis.propagation is result
        self.view.set_differences(
            comparison.differences,
            comparison.collectives,
            analysis.compiled_collectives if mine else None,
            compiled_by=analysis.compiled_by if mine else None,
            # a pane showing GSPMD's shardings marks them in both panes, not the toggle
            marked=ON_PANES if self.wanted else ON_GRAPH,
        )
        if self.on:
            self.markers.set_gspmd(comparison.differences)
