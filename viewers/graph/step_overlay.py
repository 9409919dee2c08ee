"""What a propagation step looks like on the graph: an overlay, never a rebuild.

``StepOverlay`` draws, on top of a ``GraphView``'s drawing, the edges along which the
current step's axes flowed (in each axis' colour) and a ring around the node that holds
the step's op: the op itself, the folded scope that hides it, or the op whose region or
callee holds it. It also makes the badges show the sharding at the step (through the
scene's ``spec_override``), and can ring the badges whose sharding changed in the last
edit. When the view rebuilds its drawing (unfolding a scope, entering a region) the
overlay draws itself again on the new items.

On a window's view (not ``whole``, and on screen) it keeps each step short on a large
drawing: a flow along an edge that crosses the whole drawing is made only near what the
view shows (and more as it scrolls), and a change of many badges (a jump across thousands
of steps, back to the final state) refreshes the badges on screen at once and the others
in short slices afterwards. A picture of the whole drawing takes a ``whole`` overlay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from shardscope.backend.program.layout import FrameIndex
from shardscope.backend.program.placement import NODE_H, NODE_W
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.colors import axis_color
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.graph.flow_items import PIECE, FlowItem, OverlayItem, edge_runs
from shardscope.viewers.graph.items import BadgeItem

if TYPE_CHECKING:
    from shardscope.backend.propagation.timeline import Step
    from shardscope.backend.session.playback import Playback
    from shardscope.viewers.graph.view import GraphView

# (spec, origin) a badge shows for a value, given what the session would show.
SpecOverride = Callable[[int, "Spec | None", str], "tuple[Spec | None, str]"]

EDGE_WIDTH = 4.0
RING_WIDTH = 3.5
# The ring around a badge the last edit changed: its margin, pen width and fill's alpha.
CHANGED_PAD, CHANGED_WIDTH, CHANGED_ALPHA = 4.0, 2.5, 60
# A step that changes more badges than this (a jump across thousands of steps, the final
# state) on a live view refreshes those on screen at once and the rest in slices of at
# most SLICE_MS each, so that the window keeps answering keys meanwhile.
AT_ONCE = 200
SLICE_MS = 12


def playback_override(playback: Playback, user_specs: Mapping[int, Spec]) -> SpecOverride:
    """Badges at ``playback``'s step: the value's sharding there, from ``user`` (a value
    the user annotated), ``code`` (it holds no more than before propagation),
    ``propagated``, or ``none`` (no axis yet). Off step mode, the session's own."""
    cache: dict[tuple, Spec] = {}

    def override(vid: int, spec: Spec | None, origin: str) -> tuple[Spec | None, str]:
        if not playback.active:
            return spec, origin
        state = playback.value_at(vid)
        if state is None:
            return spec, origin
        dims = state.dims
        shown = cache.get(dims)
        if shown is None:
            shown = cache[dims] = Spec.of(*[d if d else None for d in dims])
        if vid in user_specs:
            return shown, "user"
        if not state.axes:
            return shown, "none"
        start = playback.timeline.initial.get(vid)
        return shown, "code" if start is not None and start.axes >= state.axes else "propagated"

    return override


class StepOverlay:
    """See the module docstring."""

    def __init__(self, view: GraphView, *, whole: bool = False) -> None:
        """``whole``: draw each flow along its whole edge at once (for a picture of the
        whole drawing); else, while the view is on screen, near what it shows, and more
        as it scrolls or zooms."""
        self.view = view
        self.whole = whole
        self.scene = view.graph_scene
        self.steps: list[Step] = []
        self.changed_values: frozenset[int] = frozenset()
        # False while the view shows other shardings than the current result's (a side
        # by side pane showing "before the last edit"): its steps and rings are not drawn
        self.marks_shown = True
        self.flow_items: list[FlowItem] = []
        self.ring_items: list[QGraphicsPathItem] = []
        self.change_items: list[QGraphicsPathItem] = []
        self.marked_nodes: list[int] = []
        self._index: FrameIndex | None = None
        self._holders: dict[str, int] | None = None
        self._members: tuple[str, set[int]] | None = None
        self._edges_at: dict[int, list] | None = None
        # each drawn edge's runs (``flow_items.edge_runs``), kept until the drawing is rebuilt
        self._runs: dict[int, tuple[object, float, list[tuple]]] = {}
        # badges whose shown sharding is out of date (off screen), refreshed in slices
        self._stale: dict[int, BadgeItem] = {}
        self._drawn_values: set[int] | None = None
        # where each badge of the drawing is (id -> x, y), to find the stale ones on screen
        self._badge_at: dict[int, tuple[float, float]] | None = None
        self._slices = QTimer()
        self._slices.setSingleShot(True)
        self._slices.setInterval(0)
        self._slices.timeout.connect(self._refresh_slice)
        self._closed = False
        self._links = Connections()
        self._links.connect(self.scene.drawn, self._on_drawn)
        self._links.connect(view.session.events.program, self._on_program)
        self._links.connect(view.viewMoved, self._on_moved)

    def close(self) -> None:
        """Stop following the scene and the session (a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        self.settle()
        self._links.close()

    # -- badges -------------------------------------------------------------------------
    def set_spec_override(
        self, override: SpecOverride | None, values: Iterable[int] | None
    ) -> None:
        """Badges show ``override``'s spec (None: the session's); repaint ``values`` (all
        badges when None). On a live view (see ``__init__``) a change of many badges
        repaints those on screen now and the others in slices (``settle`` finishes)."""
        scene = self.scene
        scene.spec_override = override
        if scene.staging is not None:
            # a drawing on its way: it notes what to refresh when it is shown
            if values is None:
                self._stale.clear()
                scene.refresh_all()
            else:
                scene.refresh_values(values)
            return
        if values is None:
            badges = scene.badges
        else:
            if self._drawn_values is None:
                self._drawn_values = {v for b in scene.badges for v in b.value_ids}
            found: dict[int, BadgeItem] = {}
            # a jump changes thousands of values; a folded drawing shows few of them
            for v in self._drawn_values.intersection(values):
                for badge in scene.badges_of(v):
                    found[id(badge)] = badge
            badges = list(found.values())
        stale = self._stale
        on_screen = self._on_screen() if len(badges) > AT_ONCE else None
        if on_screen is None:
            for badge in badges:
                stale.pop(id(badge), None)
                scene.refresh_badge(badge)
            return
        for badge in badges:
            stale[id(badge)] = badge
        self._refresh_near(on_screen)
        if stale:
            self._slices.start()

    def settle(self) -> None:
        """Refresh now every badge still waiting for its slice."""
        self._slices.stop()
        stale, self._stale = self._stale, {}
        for badge in stale.values():
            if badge.scene() is self.scene:
                self.scene.refresh_badge(badge)

    @property
    def settled(self) -> bool:
        """Whether every badge shows the override's sharding."""
        return not self._stale

    def _on_screen(self) -> QRectF | None:
        view = self.view
        if self.whole or not view.isVisible():
            return None
        return view.mapToScene(view.viewport().rect()).boundingRect()

    def _refresh_near(self, rect: QRectF) -> None:
        stale = self._stale
        if not stale:
            return
        if self._badge_at is None:
            self._badge_at = {id(b): (b.x(), b.y()) for b in self.scene.badges}
        at = self._badge_at
        # a badge is placed by its centre: reach half a wide badge beyond the rect
        x0, y0 = rect.left() - NODE_W, rect.top() - NODE_H
        x1, y1 = rect.right() + NODE_W, rect.bottom() + NODE_H
        near = []
        for key in stale:
            x, y = at.get(key, (x0, y0))
            if x0 <= x <= x1 and y0 <= y <= y1:
                near.append(key)
        for key in near:
            badge = stale.pop(key)
            if badge.scene() is self.scene:
                self.scene.refresh_badge(badge)

    def _refresh_slice(self) -> None:
        clock = QElapsedTimer()
        clock.start()
        stale, scene = self._stale, self.scene
        while stale and clock.elapsed() < SLICE_MS:
            _key, badge = stale.popitem()
            if badge.scene() is scene:
                scene.refresh_badge(badge)
        if stale:
            self._slices.start()

    # -- the step -----------------------------------------------------------------------
    def show_steps(self, steps: list[Step]) -> None:
        """Draw ``steps`` (the rows of one step index; [] clears)."""
        self.steps = list(steps)
        self._draw_steps()

    def reveal(self) -> None:
        """Scroll the view (only if needed) so the marked node is on screen."""
        if self.marked_nodes and self.view.layout_ is not None:
            self.view.ensureVisible(self.view.nodes[self.marked_nodes[0]], 80, 80)

    def set_marks_shown(self, shown: bool) -> None:
        """Draw the steps' flows and rings and the changed badges' rings (True), or none
        of them (False: the view shows shardings they do not belong to)."""
        shown = bool(shown)
        if shown == self.marks_shown:
            return
        self.marks_shown = shown
        self._draw_steps()
        self._draw_changes()

    def set_changed(self, values: Iterable[int]) -> None:
        """Ring the badges of ``values`` (what the last edit changed; [] clears)."""
        self.changed_values = frozenset(values)
        self._draw_changes()

    def _on_program(self, _program) -> None:
        self._drawn_values = None
        self._badge_at = None
        self._index = None
        self._members = None
        self._holders = None
        self.steps = []
        self.changed_values = frozenset()

    def _on_drawn(self) -> None:
        # the scene dropped every item: ours are gone with them, and the new badges show
        # the override already
        self._stale.clear()
        self._slices.stop()
        self._drawn_values = None
        self._badge_at = None
        self.flow_items, self.ring_items, self.change_items = [], [], []
        self._edges_at = None
        self._runs = {}
        self._holders = None
        self._draw_steps()
        self._draw_changes()

    def _clear(self, items: list[QGraphicsPathItem]) -> None:
        for item in items:
            if item.scene() is self.scene:
                self.scene.removeItem(item)
        items.clear()

    def _draw_steps(self) -> None:
        self._clear(self.flow_items)
        self._clear(self.ring_items)
        self.marked_nodes = []
        layout = self.view.layout_
        if not self.steps or layout is None or not self.marks_shown:
            return
        names = self._axis_names()
        rings_at: dict[int, list[str]] = {}
        for step in self.steps:
            color = axis_color(names, step.axis.split(":(")[0])
            node = self.node_of_step(step)
            if node is None:
                continue
            if node not in self.marked_nodes:
                self.marked_nodes.append(node)
            rings = rings_at.setdefault(node, [])
            if step.axis not in rings:
                # one ring per axis moved across the node, each a little outside the last
                self.ring_items.append(self._ring(node, color, len(rings)))
                rings.append(step.axis)
            wanted = set(step.values)
            if step.source_value is not None:
                wanted.add(step.source_value)
            for edge_item in self._edges_touching(node):
                if wanted.intersection(edge_item.edge.values):
                    self.flow_items.append(self._flow(edge_item, color))

    def _scale(self) -> float:
        return self.view.transform().m11()

    def _axis_names(self) -> tuple[str, ...]:
        mesh = self.view.session.mesh
        return mesh.axis_names if mesh is not None else ()

    def _ring(self, node: int, color: QColor, outer: int = 0) -> QGraphicsPathItem:
        n = self.view.layout_.nodes[node]
        path = QPainterPath()
        pad = 6 + 5 * outer
        rect = QRectF(
            n.x - NODE_W / 2 - pad, n.y - NODE_H / 2 - pad, NODE_W + 2 * pad, NODE_H + 2 * pad
        )
        path.addRoundedRect(rect, 10, 10)
        item = OverlayItem(path, self._scale())
        pen = QPen(color, RING_WIDTH)
        pen.setCosmetic(True)
        item.setPen(pen)
        item.setBrush(Qt.BrushStyle.NoBrush)
        item.setZValue(2.5)
        item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)
        item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        item.setData(0, "step-ring")
        self.scene.addItem(item)
        return item

    def _flow(self, edge_item, color: QColor) -> QGraphicsPathItem:
        pen = QPen(color, EDGE_WIDTH)
        pen.setCosmetic(True)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        # pieces about PIECE pixels long at the view's zoom (zoomed out, a few scene
        # units would make thousands of pieces no wider than a pixel)
        piece = PIECE / max(self._scale(), 0.02)
        kept = self._runs.get(id(edge_item))
        if kept is None or kept[0] is not edge_item or kept[1] != piece:
            kept = self._runs[id(edge_item)] = (
                edge_item,
                piece,
                edge_runs(edge_item.path(), piece),
            )
        item = FlowItem(edge_item.path(), self._scale(), pen, kept[2])
        item.setZValue(1)
        item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        item.setData(0, "step-flow")
        self.scene.addItem(item)
        item.cover(self._near_view())
        return item

    def _near_view(self) -> QRectF | None:
        """Where flows are drawn: the part of the scene the view shows and as much again
        around it (None: everywhere)."""
        view = self.view
        if self.whole or not view.isVisible():
            return None
        rect = view.mapToScene(view.viewport().rect()).boundingRect()
        return rect.adjusted(-rect.width(), -rect.height(), rect.width(), rect.height())

    def _on_moved(self) -> None:
        if self._stale:
            rect = self._on_screen()
            if rect is not None:
                self._refresh_near(rect)
        if self.flow_items:
            rect = self._near_view()
            for item in self.flow_items:
                item.cover(rect)

    def _edges_touching(self, node: int) -> list:
        if self._edges_at is None:
            at: dict[int, list] = {}
            for item in self.scene.edges:
                at.setdefault(item.edge.src, []).append(item)
                if item.edge.dst != item.edge.src:
                    at.setdefault(item.edge.dst, []).append(item)
            self._edges_at = at
        return self._edges_at.get(node, [])

    def node_of_step(self, step: Step) -> int | None:
        """The drawn node that holds the step's op (or, for a step with no op, the node
        that produces or returns its first value)."""
        layout = self.view.layout_
        graph = self.view.session.graph
        if layout is None or graph is None:
            return None
        op = step.op
        if op is None:
            for v in step.values:
                key = f"in:{v}"
                n = layout.node_by_key(key)
                if n is not None:
                    return n
                producer = graph.values[v].producer
                if producer is not None:
                    op = producer
                    break
            else:
                return layout.node_by_key("out")
        top = self.op_holder(op)
        return layout.node_of_op.get(top) if top is not None else None

    def op_holder(self, op: int) -> int | None:
        """The op of the view's frame that is or holds ``op`` (through regions and calls)."""
        view = self.view
        graph = view.session.graph
        frame = view.frame
        if graph is None or frame is None:
            return None
        if self._index is None or self._index.graph is not graph:
            self._index = FrameIndex(graph)
            self._holders = None
        if self._members is None or self._members[0] != frame.key():
            self._members = (frame.key(), set(self._index.frame_ops(frame)))
            self._holders = None
        members = self._members[1]
        top = self._index.ancestor_in(op, frame, members)
        if top is not None:
            return top
        if self._holders is None:
            self._holders = self._callee_holders(members)
        start = op
        seen = 0
        while start is not None and seen < 10_000:
            holder = self._holders.get(graph.ops[start].function)
            if holder is not None:
                return holder
            start = graph.ops[start].parent
            seen += 1
        return None

    def _callee_holders(self, members: set[int]) -> dict[str, int]:
        """Each function called (directly or not) from the frame's ops: the frame op that
        leads to it."""
        graph = self.view.session.graph
        holders: dict[str, int] = {}
        todo: list[tuple[int, int]] = [(m, m) for m in members]
        by_function: dict[str, list[int]] = {}
        for o in graph.ops:
            by_function.setdefault(o.function, []).append(o.id)
        while todo:
            op_id, holder = todo.pop()
            op = graph.ops[op_id]
            for region in op.regions:
                todo.extend((sub, holder) for sub in region.ops)
            callee = op.callee
            if callee and callee in graph.functions and callee not in holders:
                holders[callee] = holder
                todo.extend((sub, holder) for sub in by_function.get(callee, ()))
        return holders

    # -- changed badges -----------------------------------------------------------------
    def _draw_changes(self) -> None:
        self._clear(self.change_items)
        if not self.changed_values or not self.marks_shown:
            return
        color = QColor(self.view.style_.theme.highlight)
        for vid in sorted(self.changed_values):
            for badge in self.scene.badges_of(vid):
                pad = CHANGED_PAD
                rect = badge.sceneBoundingRect().adjusted(-pad, -pad, pad, pad)
                path = QPainterPath()
                path.addRoundedRect(rect, 7, 7)
                item = OverlayItem(path, self._scale())
                pen = QPen(color, CHANGED_WIDTH)
                pen.setCosmetic(True)
                item.setPen(pen)
                fill = QColor(color)
                fill.setAlpha(CHANGED_ALPHA)
                item.setBrush(fill)
                item.setZValue(2.9)
                item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
                item.setData(0, "changed")
                self.scene.addItem(item)
                self.change_items.append(item)
