"""The debugger's docks wired to the window: conflicts, collectives, the GSPMD comparison,
the graph's marks and the badge legend.

``Debugger`` fills the conflicts and collectives docks from each propagation result,
and the collectives dock again when XLA's compile of it arrives (``events.compiled``),
priced for the hardware the user picks in the dock (remembered in the settings). It
reveals the op of the conflict or collective the user chooses (a compiled one: its op and
its tensor, the shardings that differ, its links to the conflict and to provenance),
outlines a collective's device groups through the window's ``Selection`` (the device
views follow it), and runs the GSPMD comparison in the background while its toggle is on
or the side-by-side panes want it (again after each propagation; a result that arrives
after a newer run started is dropped).
``gspmdCompared`` tells when ``differences`` holds the comparison of the current result.

On a mesh laid over several hosts (``Session.hosts``) the collectives dock shows the
session's analysis laid over them by ``cost.traffic.apply_host_layout`` (which collectives
cross hosts, the bytes across hosts, each host the fast link's domain), kept in the session
(``Session.set_priced``): the hosts change without a new propagation, and the dock follows
at once. The host
warnings that laying out adds go to Messages once the compiled collectives are in (or the
program will not be compiled), each once per result and layout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QScrollArea, QWidget

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.cost import hardware
from shardscope.backend.cost.traffic import apply_host_layout
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import Difference, GspmdComparison, compare_gspmd
from shardscope.backend.propagation.conflicts import settling_steps
from shardscope.backend.run.compiled import MAX_CPU_DEVICES
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.messages import MessagesView
from shardscope.viewers.debugger.collectives import CollectivesView, main_op
from shardscope.viewers.debugger.conflicts import ConflictsView
from shardscope.viewers.debugger.gspmd import GspmdView
from shardscope.viewers.graph.legend import BadgeLegend, LegendButton
from shardscope.viewers.graph.markers import GraphMarkers
from shardscope.viewers.graph.view import GraphView
from shardscope.viewers.mesh.editor import MeshEditor

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from shardscope.app.window.docks import Docks
    from shardscope.app.window.propagation import PropagationScheduler
    from shardscope.app.window.settings import Settings
    from shardscope.app.window.tasks import TaskRunner
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.selection import Selection


class Window(Protocol):
    """The parts of the main window the debugger works with."""

    session: Session
    docks: Docks
    graph: GraphView
    mesh_editor: MeshEditor
    selection: Selection
    messages: MessagesView
    runner: TaskRunner
    propagation: PropagationScheduler
    settings: Settings

    def statusBar(self) -> QStatusBar: ...
    def select_op(self, op_id: int) -> None: ...
    def select_value(self, value_id: int) -> None: ...


def gspmd_task(program: Program, result: PropagationResult) -> Callable[[], GspmdComparison]:
    """The function the comparison task runs: GSPMD's differences, compiled collectives
    and warnings (``compare_gspmd``)."""
    return lambda: compare_gspmd(program, result)


def reveal_grid(grid: QWidget) -> None:
    """Scroll the mesh editor (it scrolls in a short dock) down to the device grid, left
    where it is across: the grid's first devices stay in sight."""
    child, parent = grid, grid.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea) and parent.widget() is not None:
            across = parent.horizontalScrollBar().value()
            parent.ensureWidgetVisible(child, 0, 0)
            parent.horizontalScrollBar().setValue(across)
            child = parent
        parent = parent.parentWidget()


class Debugger(QObject):
    """See the module docstring."""

    gspmdCompared = Signal()

    def __init__(self, window: Window) -> None:
        super().__init__(window)  # type: ignore[arg-type]
        self.window = window
        self.session = window.session
        self.conflicts = window.docks.widget("dock_conflicts", ConflictsView)
        self.collectives = window.docks.widget("dock_collectives", CollectivesView)
        self.gspmd = window.docks.widget("dock_gspmd", GspmdView)
        self.markers = GraphMarkers(window.graph)
        self.legend_button = LegendButton(window.graph)
        self.gspmd_on = False
        self.settling: dict[int, list[int]] = {}  # step index -> conflicts settled there
        self.gspmd_for: PropagationResult | None = None  # the result last compared
        self.differences: list[Difference] | None = None  # GSPMD's, for ``gspmd_for``
        self.gspmd_wanted = False  # the side-by-side panes show GSPMD's shardings
        self.gspmd_failed_for: PropagationResult | None = None  # not tried again for it
        self._in_flight = 0  # comparison tasks started and not yet reported
        self._generation = 0
        # The host warnings said: (result, host layout, warnings).
        self._posted: tuple[object, object, set[str]] = (None, None, set())
        self.conflicts.opRequested.connect(self.reveal_op)
        self.conflicts.valueRequested.connect(self.reveal_value)
        self.collectives.collectiveSelected.connect(self.show_collective)
        self.collectives.compiledSelected.connect(self.show_compiled)
        self.collectives.hardwareChosen.connect(self.set_hardware)
        self.collectives.conflictRequested.connect(self.show_conflict)
        self.collectives.provenanceRequested.connect(self.show_provenance)
        names = [p.name for p in hardware.profiles()]
        chosen = window.settings.hardware(hardware.DEFAULT_PROFILE)
        self.hardware = chosen if chosen in names else hardware.DEFAULT_PROFILE
        self.collectives.set_profiles(
            [(p.name, p.label) for p in hardware.profiles()], self.hardware
        )
        self.gspmd.valueSelected.connect(self.reveal_value)
        ev = self.session.events
        self._links = Connections()
        self._links.connect(ev.propagation, self._on_propagation)
        self._links.connect(ev.compiled, self._on_compiled)
        self._links.connect(ev.mesh, self._on_mesh)
        self._links.connect(ev.hosts, self._on_hosts)
        self._links.connect(ev.program, self._on_program)
        self._on_propagation(self.session.propagation)
        window.docks["dock_conflicts"].raise_()

    def close(self) -> None:
        self._links.close()
        self.markers.close()

    # -- propagation --------------------------------------------------------------------
    def _on_program(self, _program) -> None:
        self.window.selection.clear_groups()

    def _on_mesh(self, _mesh) -> None:
        self.window.selection.clear_groups()

    def _on_hosts(self, _hosts) -> None:
        """Another host layout of the same propagation: the dock shows it laid over the
        new hosts (a new mesh order propagates again, and is shown when it comes)."""
        result = self.session.propagation
        if result is not None and result.mesh == self.session.mesh:
            self._show_collectives(result)

    def _on_propagation(self, result: PropagationResult | None) -> None:
        pending = result is None and self.window.propagation.auto
        pending = pending and self.session.program is not None
        self.conflicts.set_result(result, pending=pending)
        self.settling = (
            settling_steps(result.conflicts, result.timeline, result.graph)
            if result is not None
            else {}
        )
        self._show_collectives(result, pending=pending)
        self.window.selection.clear_groups()
        if self.gspmd_on or self.gspmd_wanted:
            self._compare(result)

    def _on_compiled(self, analysis: Analysis) -> None:
        result = analysis.propagation
        if result is self.session.propagation:
            self._show_collectives(result)
            if self.gspmd_for is result:
                self.gspmd.set_shardy(analysis.compiled_collectives)
            self.window.selection.clear_groups()

    def _show_collectives(self, result: PropagationResult | None, *, pending=False) -> None:
        analysis = self._analysis_of(result)
        compiled = analysis is not None and analysis.compiled is not None
        fits = result is not None and result.mesh.size <= MAX_CPU_DEVICES
        note = ""
        if result is not None and not fits:
            note = (
                f"Not compiled: the mesh has {result.mesh.size} devices and one process "
                f"compiles for at most {MAX_CPU_DEVICES}; propagate on a smaller mesh to "
                "see the compiled collectives."
            )
        laid, pricing = self._lay_out(analysis, final=compiled or not fits)
        self.collectives.set_result(
            laid,
            pending=pending,
            compiling=fits and not compiled and analysis.compile_error is None,
            pricing=pricing if compiled else None,
            note=note,
        )

    def _analysis_of(self, result: PropagationResult | None) -> Analysis | None:
        """The session's analysis of ``result`` (its compile, where it came); a bare one
        for a result that is no longer the session's."""
        if result is None:
            return None
        analysis = self.session.analysis
        return (
            analysis
            if analysis is not None and analysis.propagation is result
            else Analysis(result)
        )

    def _lay_out(self, analysis: Analysis | None, *, final: bool = True):
        """``analysis`` laid over the session's hosts and priced (``apply_host_layout``),
        and its pricing; with ``final``, its host warnings said in Messages. (None, None)
        without an analysis; the analysis as it is where it cannot be laid out."""
        if analysis is None:
            return None, None
        result = analysis.propagation
        hosts = None
        if result.mesh == self.session.mesh:
            try:
                hosts = self.session.mesh_hosts()
            except ShardscopeError:
                hosts = None
        try:
            traffic, pricing = apply_host_layout(result, analysis.compile, hosts, self.hardware)
        except ShardscopeError as exc:
            self.window.messages.error(str(exc))
            return analysis, None
        laid = analysis.with_parts(traffic=traffic, pricing=pricing)
        # The session's analysis is laid out and priced as the dock shows it.
        self.session.set_priced(result, traffic, pricing)
        if final or analysis.compile_error is not None:
            self._post(result, list(traffic.warnings))
        return laid, pricing

    def _post(self, result: PropagationResult, warnings: list[str]) -> None:
        """Say each host warning once per result and host layout."""
        layout = self.session.hosts
        if self._posted[0] is not result or self._posted[1] != layout:
            self._posted = (result, layout, set())
        said = self._posted[2]
        for warning in warnings:
            if warning not in said:
                said.add(warning)
                self.window.messages.add(warning, "warning")

    def set_hardware(self, name: str) -> None:
        """Price the collectives for hardware profile ``name`` (remembered for the next
        start): the dock repaints its time cells and cost lines only."""
        self.hardware = name
        self.window.settings.set_hardware(name)
        analysis = self.session.analysis
        if analysis is None or analysis.compiled is None:
            return
        self.collectives.set_pricing(self._lay_out(analysis)[1])

    def show_step(self, index: int) -> None:
        """Highlight the conflicts settled at timeline step ``index`` (-1: none)."""
        self.conflicts.mark_settled(self.settling.get(index, []))

    # -- choosing -------------------------------------------------------------------------
    def reveal_op(self, op_id: int) -> None:
        """Select an op on the graph (unfolding what hides it) and show its source."""
        if self.window.graph.select_op(op_id, center=True):
            self.window.select_op(op_id)

    def reveal_value(self, value_id: int) -> None:
        """Select a tensor on the graph and in the inspector."""
        self.window.graph.select_value(value_id, center=True)
        self.window.select_value(value_id)

    def show_compiled(self, index: int) -> None:
        """Explain compiled collective ``index``: select its op and tensor on the graph
        (its op's source line shown), outline its device groups on the mesh."""
        analysis = self.session.analysis
        compiled = analysis.compiled_collectives if analysis is not None else None
        if compiled is None or not 0 <= index < len(compiled):
            return
        c = compiled[index]
        # Device ids, in the mesh's device order (the compile lays the devices out in it).
        groups = [tuple(g) for g in c.device_groups or ()]
        self.window.selection.outline_groups(groups)
        if groups:
            reveal_grid(self.window.mesh_editor.grid)
        self.collectives.show_compiled(index, groups)
        op = main_op(c)
        value = c.cause.value if c.cause is not None else None
        graph = self.window.graph
        if op is not None and graph.select_op(op, center=True):
            badge = graph.badge_for(value) if value is not None else None
            if badge is not None:
                badge.setSelected(True)
        elif value is not None:
            graph.select_value(value, center=True)
        # The inspector shows the tensor, the Source dock the op's line.
        if value is not None:
            self.window.select_value(value)
        if op is not None:
            self.window.select_op(op)

    def show_conflict(self, index: int) -> None:
        """Conflict ``index`` chosen in the Conflicts dock (its factor table shown)."""
        result = self.session.propagation
        if result is None or not 0 <= index < len(result.conflicts):
            return
        dock = self.window.docks["dock_conflicts"]
        dock.show()
        dock.raise_()
        self.conflicts.select(index)

    def show_provenance(self, value_id: int) -> None:
        """The Provenance dock on ``value_id``: where its sharding came from."""
        graph = self.session.graph
        if graph is None or not 0 <= value_id < len(graph.values):
            return
        self.reveal_value(value_id)
        dock = self.window.docks["dock_provenance"]
        dock.show()
        dock.raise_()

    def show_collective(self, index: int) -> None:
        """Outline the device groups of ``result.collectives[index]`` and reveal its op."""
        result = self.session.propagation
        if result is None or not 0 <= index < len(result.collectives):
            return
        c = result.collectives[index]
        mesh = self.session.mesh
        try:
            groups = device_groups(mesh, c.axes) if mesh is not None else []
        except ShardscopeError as exc:
            self.window.messages.error(str(exc))
            groups = []
        self.window.selection.outline_groups(groups)
        if groups:
            reveal_grid(self.window.mesh_editor.grid)
        self.collectives.show_groups(index, groups)
        if c.op is not None:
            self.reveal_op(c.op)
        elif c.value is not None:
            self.reveal_value(c.value)

    # -- GSPMD --------------------------------------------------------------------------
    @property
    def comparing(self) -> bool:
        """Whether a GSPMD comparison is running (its worker is cancelled on quit)."""
        return self._in_flight > 0

    def set_gspmd(self, on: bool) -> None:
        """Turn the GSPMD comparison on (runs now, and after each propagation) or off."""
        self.gspmd_on = bool(on)
        if self.gspmd_on:
            self.window.docks["dock_gspmd"].show()
            self.window.docks["dock_gspmd"].raise_()
            self._compare(self.session.propagation)
        else:
            self.markers.set_gspmd(None)
            self.gspmd.set_off()
            if not self.gspmd_wanted:
                self._generation += 1
                self.gspmd_for = None
                self.differences = None

    def want_gspmd(self, on: bool) -> None:
        """The side-by-side panes need GSPMD's shardings (``on``): compare now unless the
        current result was compared already or is being compared, and after each
        propagation; the dock and the graph's marks follow the toggle only."""
        self.gspmd_wanted = bool(on)
        if not on or self.gspmd_on:
            return
        result = self.session.propagation
        if result is not None and (
            self.gspmd_for is result or self.gspmd_failed_for is result or self.comparing
        ):
            return
        self._compare(result)

    def _compare(self, result: PropagationResult | None) -> None:
        self._generation += 1
        generation = self._generation
        self.markers.set_gspmd(None)
        self.differences = None
        program = self.session.program
        if result is None or program is None:
            self.gspmd_for = None
            if self.gspmd_on:
                self.gspmd.set_waiting()
            return
        if self.gspmd_on:
            self.gspmd.set_running()
        self._in_flight += 1

        def done(comparison: GspmdComparison, seconds: float) -> None:
            self._in_flight -= 1
            if generation != self._generation or self.session.propagation is not result:
                return
            differences = comparison.differences
            self.gspmd_for = result
            self.differences = differences
            if self.gspmd_on:
                analysis = self._analysis_of(result)
                self.gspmd.set_differences(
                    differences, comparison.collectives, analysis.compiled_collectives
                )
                self.markers.set_gspmd(differences)
            for warning in comparison.warnings:
                self.window.messages.add(warning, "warning")
            n = len(differences)
            self.window.statusBar().showMessage(
                f"GSPMD compared in {seconds:.2f} s: {n} value{'s' if n != 1 else ''} differ",
                4000,
            )
            self.gspmdCompared.emit()

        def failed(message: str) -> None:
            self._in_flight -= 1
            if generation != self._generation:
                return
            self.gspmd_failed_for = result
            if self.gspmd_on:
                self.gspmd.set_failed(message)
            self.window.messages.error(f"GSPMD comparison failed: {message}")
            self.gspmdCompared.emit()

        self.window.runner.start(gspmd_task(program, result), done, failed)

    # -- legend ---------------------------------------------------------------------------
    def show_legend(self) -> BadgeLegend:
        """Open the badge legend."""
        return self.legend_button.open_legend()
