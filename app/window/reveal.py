"""The rows chosen in the debugger's docks, revealed on the graph and the device views.

``Revealer`` answers a choice in the Conflicts, Collectives and GSPMD docks: it selects
the op or tensor of the row on the graph (unfolding what hides it) and in the inspector,
outlines a collective's device groups through the window's ``Selection`` (the device views
follow it), and follows a compiled collective's links to its conflict and to the
provenance of its tensor. The outlined groups go when the program, the mesh, the
propagation or its compile changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QScrollArea, QWidget

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.debugger.collectives_view import CollectivesView, main_op
from shardscope.viewers.debugger.conflicts import ConflictsView
from shardscope.viewers.debugger.gspmd import GspmdView

if TYPE_CHECKING:
    from shardscope.app.window.docks import Docks
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.selection import Selection
    from shardscope.viewers.common.messages import MessagesView
    from shardscope.viewers.graph.view import GraphView
    from shardscope.viewers.mesh.editor import MeshEditor


class Window(Protocol):
    """The parts of the main window that revealing a row works with."""

    session: Session
    docks: Docks
    graph: GraphView
    mesh_editor: MeshEditor
    selection: Selection
    messages: MessagesView

    def select_op(self, op_id: int) -> None: ...
    def select_value(self, value_id: int) -> None: ...


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


class Revealer:
    """Reveals the rows chosen in the debugger's docks; see the module docstring."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.session = window.session
        self.conflicts = window.docks.widget("dock_conflicts", ConflictsView)
        self.collectives = window.docks.widget("dock_collectives", CollectivesView)
        links = self._links = Connections()
        links.connect(self.conflicts.opRequested, self.reveal_op)
        links.connect(self.conflicts.valueRequested, self.reveal_value)
        links.connect(self.collectives.collectiveSelected, self.show_collective)
        links.connect(self.collectives.compiledSelected, self.show_compiled)
        links.connect(self.collectives.conflictRequested, self.show_conflict)
        links.connect(self.collectives.provenanceRequested, self.show_provenance)
        links.connect(window.docks.widget("dock_gspmd", GspmdView).valueSelected, self.reveal_value)
        clear = window.selection.clear_groups
        ev = self.session.events
        for changed in (ev.program, ev.mesh, ev.propagation, ev.compiled):
            links.connect(changed, lambda _part: clear())

    def close(self) -> None:
        """Answer the docks and follow the session no more."""
        self._links.close()

    def reveal_op(self, op_id: int) -> None:
        """Select an op on the graph (unfolding what hides it) and show its source."""
        if self.window.graph.select_op(op_id, center=True):
            self.window.select_op(op_id)

    def reveal_value(self, value_id: int) -> None:
        """Select a tensor on the graph and in the inspector."""
        self.window.graph.select_value(value_id, center=True)
        self.window.select_value(value_id)

    def _outline(self, groups: list[tuple[int, ...]]) -> None:
        """Outline ``groups`` on the device views, the mesh editor's grid scrolled into
        sight."""
        self.window.selection.outline_groups(groups)
        if groups:
            reveal_grid(self.window.mesh_editor.grid)

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
        self._outline(groups)
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
        self.window.docks.show("dock_conflicts")
        self.conflicts.select(index)

    def show_provenance(self, value_id: int) -> None:
        """The Provenance dock on ``value_id``: where its sharding came from."""
        graph = self.session.graph
        if graph is None or not 0 <= value_id < len(graph.values):
            return
        self.reveal_value(value_id)
        self.window.docks.show("dock_provenance")

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
        self._outline(groups)
        self.collectives.show_groups(index, groups)
        if c.op is not None:
            self.reveal_op(c.op)
        elif c.value is not None:
            self.reveal_value(c.value)
