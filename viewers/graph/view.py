"""The program graph: a layered drawing of one function or region, with spec badges.

``GraphView`` observes a ``shardscope.backend.session.document.Session`` and never edits it: selections,
drops of mesh axes on badge dimensions, entering regions and folding scopes are emitted
as signals; the app turns edits into undoable commands. Only the visible part of the
program (one frame, folded to its expanded scopes) is laid out, once per expansion
state, and spec changes repaint just the badges of the tensors that changed. The view
keeps where the user is (frames, expanded scopes, zoom) and handles what they do; its
``GraphScene`` holds the drawing.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsView, QMenu, QToolTip, QWidget

from shardscope.backend.program.layout import (
    Frame,
    FrameIndex,
    GraphLayout,
    all_scopes,
    build_layout,
    default_expanded,
    main_region,
    region_names,
    relative_scopes,
    scope_paths,
)
from shardscope.backend.program.locations import split_name_path
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.colors import THEMES, theme_for
from shardscope.viewers.common.damage import shifted_change
from shardscope.viewers.common.mime import appends, axis_from_mime, drop_hint
from shardscope.viewers.graph.items import (
    BadgeItem,
    EdgeItem,
    GraphStyle,
    NodeItem,
    ScopeBoxItem,
)
from shardscope.viewers.graph.scene import GraphScene
from shardscope.viewers.graph.sliced import FoldJob, Runner, SlicedDrawing

if TYPE_CHECKING:
    from shardscope.backend.session.document import Session

LAYOUT_CACHE = 32
# Fitting a large frame stops at this zoom (labels stay legible) and shows its top.
MIN_FIT_SCALE = 0.6
# A frame of at most this many nodes is small: fitting shows all of it, at whatever zoom
# that takes (a user zooms in on a part of a small graph, but first sees its whole shape).
SMALL_FRAME_NODES = 24


# how far (viewport pixels) rounding may move a drawing that kept its scene place
SNAP_PIXELS = 2


class GraphView(SlicedDrawing, QGraphicsView):
    """Layered view of the session's program; see the module docstring."""

    opSelected = Signal(int)
    valueSelected = Signal(int)
    specDropped = Signal(int, int, object)  # value id, dim, axis (None = replicated)
    axisAppended = Signal(int, int, str)  # value id, dim, axis: dropped with Shift or Ctrl
    dropRejected = Signal(str)
    frameChanged = Signal(str)
    viewStateChanged = Signal(dict)
    viewMoved = Signal()  # scrolled or zoomed
    foldStarted = Signal(str)  # what a drawing built in slices does
    foldEnded = Signal(str)  # "done", "cancelled", "dropped" (the view changed) or an error

    def __init__(
        self, session: Session, parent: QWidget | None = None, *, restore: bool = True
    ) -> None:
        """``restore``: open a program where the session's view state says (the frames
        and unfolded scopes it saved), else at its outermost frame, as it opens first."""
        super().__init__(parent)
        self.session = session
        self.restore = restore
        self.graph_scene = GraphScene(session, self)
        self.setScene(self.graph_scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setAcceptDrops(True)
        self._make_style(None)
        self._index: FrameIndex | None = None
        self._frames: list[Frame] = []
        self._expanded: dict[str, frozenset[str]] = {}
        self._cache: OrderedDict[tuple, GraphLayout] = OrderedDict()
        self._find_state: tuple[str | None, int] = (None, -1)
        # Fitted and not moved since: a resize fits again (a window manager may size the
        # window only after the program loaded, which left small graphs unfitted).
        self._fitted = False
        self._fitting = False
        self.layout_: GraphLayout | None = None
        # One scope drawn on its own (``show_scope``), or None for the whole frame.
        self.within: str | None = None
        self._hover_badge: BadgeItem | None = None
        self.layout_seconds = 0.0
        # Set by the window: new drawings of many items are built in slices (the event
        # loop runs between them) and their layouts computed by ``runner``.
        self.runner: Runner | None = None
        self.in_slices = False
        self.job: FoldJob | None = None
        self._slice_timer = QTimer(self)
        self._slice_timer.setSingleShot(True)
        self._slice_timer.setInterval(0)
        self._slice_timer.timeout.connect(self._slice)
        self.scene().selectionChanged.connect(self._on_selection)
        session.events.program.connect(self._on_program_change)
        session.events.specs.connect(self._on_specs_change)
        session.events.mesh.connect(self._on_mesh_change)
        session.events.propagation.connect(self._on_propagation_change)
        session.events.final_specs.connect(self._on_final_specs)
        if session.program is not None:
            self._on_program_change(session.program)

    # -- model events -----------------------------------------------------------------
    def close(self) -> bool:
        self.cancel_fold("dropped")
        ev = self.session.events
        ev.program.disconnect(self._on_program_change)
        ev.specs.disconnect(self._on_specs_change)
        ev.mesh.disconnect(self._on_mesh_change)
        ev.propagation.disconnect(self._on_propagation_change)
        ev.final_specs.disconnect(self._on_final_specs)
        return super().close()

    def _on_program_change(self, program) -> None:
        self.cancel_fold("dropped")
        self._cache.clear()
        self._find_state = (None, -1)
        self._expanded.clear()
        if program is None:
            self._index = None
            self._frames = []
            self.graph_scene.clear()
            return
        graph = program.graph
        self._index = FrameIndex(graph)
        view = dict(self.session.view) if self.restore else {}
        frames = [Frame.from_key(k) for k in view.get("frames", [])] or [Frame(graph.main)]
        self._expanded = {k: frozenset(v) for k, v in (view.get("expanded") or {}).items()}
        try:
            for frame in frames:  # the breadcrumb names each one, not just the shown one
                frame.title(graph)
                self._index.frame_inputs(frame)
            self._frames = frames
            self._rebuild(fit=True)
        except (KeyError, IndexError, ValueError):
            self._frames = [Frame(graph.main)]
            self._expanded = {}
            self._rebuild(fit=True)

    def _on_specs_change(self, ids) -> None:
        self.graph_scene.refresh_values(ids)

    def _on_mesh_change(self, mesh) -> None:
        self.graph_scene.refresh_all()

    def _on_propagation_change(self, result) -> None:
        self.graph_scene.refresh_all()

    def _on_final_specs(self) -> None:
        self.graph_scene.refresh_all()

    # -- state ------------------------------------------------------------------------
    @property
    def nodes(self) -> list[NodeItem]:
        """The drawn nodes, in layout order."""
        return self.graph_scene.nodes

    @property
    def badges(self) -> list[BadgeItem]:
        """The drawn spec badges."""
        return self.graph_scene.badges

    @property
    def edges(self) -> list[EdgeItem]:
        """The drawn edges, in layout order."""
        return self.graph_scene.edges

    @property
    def frame(self) -> Frame | None:
        return self._frames[-1] if self._frames else None

    @property
    def frames(self) -> list[Frame]:
        return list(self._frames)

    def expanded(self) -> frozenset[str]:
        """Expanded scopes of the current frame."""
        frame = self.frame
        if frame is None:
            return frozenset()
        key = frame.key()
        if key not in self._expanded:
            self._expanded[key] = default_expanded(self.session.graph, self._index, frame)
        return self._expanded[key]

    def expanded_map(self) -> dict[str, frozenset[str]]:
        """The unfolded scopes of every frame visited, by frame key."""
        return dict(self._expanded)

    def view_state(self) -> dict:
        """JSON-able view state: the frame stack and the expanded scopes per frame."""
        return {
            "frames": [f.key() for f in self._frames],
            "expanded": {k: sorted(v) for k, v in self._expanded.items()},
        }

    def show_like(self, other: GraphView) -> None:
        """Show what ``other`` shows: its frame stack and expanded scopes (for pictures
        drawn off screen from the window's view)."""
        self._frames = list(other._frames)
        self._expanded = dict(other._expanded)
        self._rebuild(fit=True)

    def set_style_theme(self, name: str | None) -> None:
        """Redraw with the ``dark`` or ``light`` theme (None: follow the palette)."""
        self._make_style(name)
        self.setBackgroundBrush(self.style_.theme.background)
        self.graph_scene.apply_style(self.style_)

    def _make_style(self, name: str | None) -> None:
        theme = THEMES[name] if name in THEMES else theme_for(self)
        font = QFont(self.font())
        font.setPointSizeF(10.5)
        small = QFont(self.font())
        small.setPointSizeF(9.0)
        self.style_ = GraphStyle(theme, font, small)
        self.setBackgroundBrush(theme.background)

    def show_scope(self, path: str) -> None:
        """Draw only scope ``path`` of the current frame, fully unfolded, with the values
        it takes and hands on as input and output nodes (for pictures of one scope)."""
        frame = self.frame
        self.within = path
        self._expanded[frame.key()] = frozenset(
            scope_paths(self.session.graph, self._index, frame, path)
        )
        self._rebuild(fit=True)

    # -- navigation ---------------------------------------------------------------------
    def enter(self, frame: Frame) -> None:
        """Show a function or a region (pushes it on the breadcrumb)."""
        self._frames.append(frame)
        self._rebuild(fit=True)
        self._emit_state()

    def enter_op(self, op_id: int, region: int | None = None) -> bool:
        """Enter an op's region, or the callee of a ``func.call``; False if neither."""
        graph = self.session.graph
        op = graph.ops[op_id]
        if op.callee and op.callee in graph.functions:
            self.enter(Frame(op.callee))
            return True
        if op.regions:
            self.enter(
                Frame(self.frame.function, op_id, main_region(op) if region is None else region)
            )
            return True
        return False

    def back(self, levels: int = 1) -> None:
        """Leave ``levels`` frames (never the outermost)."""
        if len(self._frames) <= 1:
            return
        del self._frames[max(1, len(self._frames) - levels) :]
        self._rebuild(fit=True)
        self._emit_state()

    def set_expanded(self, path: str, expanded: bool, *, background: bool = False) -> None:
        """Unfold (or fold) one scope of the current frame. ``background``: what the
        user asked for by hand, drawn in slices where the frame is large (callers that
        look at the new drawing right away leave it off)."""
        current = set(self.expanded())
        if expanded:
            current.add(path)
            parts = path.split("/")
            current.update("/".join(parts[:k]) for k in range(1, len(parts)))
        else:
            current = {p for p in current if p != path and not p.startswith(path + "/")}
        if frozenset(current) == self.expanded():
            return
        if self.layout_ is not None and self.layout_.in_place:
            # The rest of the drawing keeps its scene position: so does the view.
            anchor = self.mapToScene(self.viewport().rect().center())
        else:
            anchor = self._anchor_scene_point(path)
        if background and self.in_slices and self.is_large(self.frame):
            target = {**self._expanded, self.frame.key(): frozenset(current)}
            what = f"{'Unfolding' if expanded else 'Folding'} {path}"
            self.show_state(list(self._frames), target, what=what, keep=anchor)
            return
        self._expanded[self.frame.key()] = frozenset(current)
        # what lies below the scope moves as one: scroll it rather than send it again
        before = self._node_points()
        with shifted_change(self, self._moves_from(before)):
            self._rebuild(fit=False, keep=anchor)
            if self.layout_.in_place:
                self._snap_to(before)
        self._emit_state()

    def _snap_to(self, before: dict[str, QPoint]) -> None:
        """Centring on a scene point rounds to whole pixels: where most of the nodes
        drawn both before and now ended up a pixel or two from where they were, scroll
        them back, so that what did not move is not sent again."""
        moves = self._moves_since(before)
        small = [(m, n) for m, n in moves.most_common() if max(map(abs, m)) <= SNAP_PIXELS]
        if not small:
            return
        (dx, dy), _ = small[0]
        if (dx, dy) != (0, 0):
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + dx)
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() + dy)

    def _node_points(self) -> dict[str, QPoint]:
        return {item.node.key: self.mapFromScene(item.pos()) for item in self.nodes}

    def _moves_since(self, before: dict[str, QPoint]) -> Counter:
        """(dx, dy) in viewport pixels -> how many of the nodes drawn both in ``before``
        and now moved by it."""
        return Counter(
            (point.x() - before[key].x(), point.y() - before[key].y())
            for key, point in self._node_points().items()
            if key in before
        )

    def _moves_from(self, before: dict[str, QPoint]):
        """A function giving how far (in viewport pixels) most of the nodes drawn both
        before and now moved: the move a redrawing can scroll."""

        def moved() -> tuple[int, int] | None:
            moves = self._moves_since(before)
            moving = [(m, n) for m, n in moves.most_common(2) if m != (0, 0)]
            return moving[0][0] if moving else None

        return moved

    def collapse_all(self) -> None:
        """Fold every scope of the current frame."""
        self._set_all(frozenset())

    def expand_all(self) -> None:
        """Unfold every scope of the current frame."""
        if self._index is None or not self._frames:
            return
        self._set_all(frozenset(all_scopes(self.session.graph, self._index, self.frame)))

    def _set_all(self, expanded: frozenset[str]) -> None:
        if not self._frames or expanded == self.expanded():
            return
        if self.in_slices and self.is_large(self.frame):
            what = "Unfolding every scope" if expanded else "Folding every scope"
            target = {**self._expanded, self.frame.key(): expanded}
            self.show_state(list(self._frames), target, what=what, fit=True)
            return
        self._expanded[self.frame.key()] = expanded
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            self._rebuild(fit=True)
        finally:
            QApplication.restoreOverrideCursor()
        self._emit_state()

    # -- drawings built in slices -------------------------------------------------------
    def state_key(self) -> tuple:
        """What the view shows: its frames and the current frame's unfolded scopes."""
        return (tuple(f.key() for f in self._frames), self.expanded())

    def _emit_state(self) -> None:
        self.frameChanged.emit(self.frame.key() if self.frame else "")
        self.viewStateChanged.emit(self.view_state())

    def _anchor_scene_point(self, path: str):
        for item in self.nodes:
            if item.node.scope == path or (item.node.scope or "").startswith(path + "/"):
                return path, self.mapFromScene(item.pos())
        return None

    # -- building ---------------------------------------------------------------------
    def _layout(self) -> GraphLayout:
        frame = self.frame
        key = (frame.key(), self.expanded(), self.within)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        t = time.perf_counter()
        layout = build_layout(
            self.session.graph, frame, self.expanded(), index=self._index, within=self.within
        )
        self.layout_seconds = time.perf_counter() - t
        self._remember(key, layout)
        return layout

    def _remember(self, key: tuple, layout: GraphLayout) -> None:
        self._cache[key] = layout
        self._cache.move_to_end(key)
        while len(self._cache) > LAYOUT_CACHE:
            self._cache.popitem(last=False)

    def share_layouts(self, other: GraphView) -> None:
        """Use ``other``'s layouts (two views of one program lay out each state once)."""
        self._cache = other._cache

    def _rebuild(self, *, fit: bool, keep=None) -> None:
        self._finish_committed()  # a drawing half in the scene goes in whole first
        scene = self.graph_scene
        scene.clear_items()
        self._hover_badge = None
        layout = self._layout()
        self.layout_ = layout
        scene.add_layout(layout, self.style_)
        self._place(fit, keep)

    def _place(self, fit: bool, keep) -> None:
        """Where a new drawing is shown: fitted, centred on the scene point ``keep``, or
        (``keep`` = (scope path, view point)) with the scope's first node at that point
        of the view, where its folded node was."""
        if fit:
            self.fit()
        elif isinstance(keep, QPointF):
            self.centerOn(keep)
        elif keep is not None:
            path, view_point = keep
            for item in self.nodes:
                if item.node.scope == path or (item.node.scope or "").startswith(path + "/"):
                    delta = self.mapToScene(view_point) - self.mapToScene(
                        self.mapFromScene(item.pos())
                    )
                    self.centerOn(self.mapToScene(self.viewport().rect().center()) - delta)
                    break

    # -- queries used by the app and tests --------------------------------------------------
    def node_labels(self) -> list[str]:
        return [item.node.label for item in self.nodes]

    def badge_for(self, value_id: int) -> BadgeItem | None:
        badges = self.graph_scene.badges_of(value_id)
        return badges[0] if badges else None

    def badge_text(self, value_id: int) -> str | None:
        badge = self.badge_for(value_id)
        if badge is None:
            return None
        return dims_text(badge.dims)

    def find(self, text: str) -> bool:
        """Select and centre the first op, scope or tensor whose name contains ``text``;
        unfolds the scope that holds it. Repeated calls cycle through the matches."""
        text = text.strip().lower()
        graph = self.session.graph
        if not text or graph is None:
            return False
        matches: list[tuple[str, int]] = []
        for v in graph.values:
            name = (v.display_name or "").lower()
            if text in name and (v.producer is not None or v.role == "arg"):
                matches.append(("value", v.id))
        frame_ops = set(self._index.frame_ops(self.frame))
        for op in graph.ops:
            # the node's own label (``call @log_softmax``) as well as its kind and scope
            label = f"call @{op.callee}" if op.callee else op.short_name
            names = (op.short_name, label, op.scope)
            if op.id in frame_ops and any(text in name.lower() for name in names):
                matches.append(("op", op.id))
        if not matches:
            return False
        last = self._find_state
        i = last[1] + 1 if last[0] == text else 0
        kind, ident = matches[i % len(matches)]
        self._find_state = (text, i % len(matches))
        if kind == "value":
            return self.select_value(ident, center=True)
        return self.select_op(ident, center=True)

    def select_op(self, op_id: int, *, center: bool = False) -> bool:
        """Select an op's node (unfolding its scope if needed)."""
        layout = self.layout_
        if layout is None:
            return False
        top = self._index.ancestor_in(op_id, self.frame, set(self._index.frame_ops(self.frame)))
        if top is None:
            return False
        n = layout.node_of_op.get(top)
        if n is not None and self.nodes[n].node.kind == "scope":
            self.set_expanded(self.nodes[n].node.scope, True)
            return self.select_op(op_id, center=center)
        if n is None:
            return False
        item = self.nodes[n]
        self.scene().clearSelection()
        item.setSelected(True)
        if center:
            self.centerOn(item)
        return True

    def frame_holds(self, op_id: int) -> bool:
        """Whether op ``op_id`` is one of the shown frame's own ops."""
        if self._index is None or not self._frames:
            return False
        return op_id in set(self._index.frame_ops(self.frame))

    def reveal_scope(self, scope: str, op_id: int) -> bool:
        """Show ``scope`` (as the program names it), a scope of op ``op_id`` of this frame:
        unfold the scopes around it, select its node (its first node when it is unfolded)
        and centre it. Falls back on the op when the scope is not one of the frame's."""
        graph = self.session.graph
        ops = self._index.frame_ops(self.frame) if self._index is not None else []
        if op_id not in set(ops):
            return self.select_op(op_id, center=True)
        rel = relative_scopes(graph, ops)[op_id]
        cut = len(split_name_path(graph.ops[op_id].scope)) - len(rel)
        parts = split_name_path(scope)[cut:]
        if not parts or tuple(parts) != rel[: len(parts)]:
            return self.select_op(op_id, center=True)
        path = "/".join(parts)
        if len(parts) > 1:
            self.set_expanded("/".join(parts[:-1]), True)
        n = self.layout_.node_by_key(f"scope:{path}")
        if n is None:  # unfolded: its first node
            n = next(
                (
                    i
                    for i, node in enumerate(self.layout_.nodes)
                    if node.scope == path or (node.scope or "").startswith(path + "/")
                ),
                None,
            )
        if n is None:
            return False
        item = self.nodes[n]
        self.scene().clearSelection()
        item.setSelected(True)
        self.centerOn(item)
        return True

    def select_value(self, value_id: int, *, center: bool = False) -> bool:
        """Select a value's badge (or its producer) and centre it."""
        badge = self.badge_for(value_id)
        if badge is None:
            producer = self.session.graph.values[value_id].producer
            if producer is not None and self.select_op(producer, center=center):
                badge = self.badge_for(value_id)
                if badge is None:
                    return True
            else:
                return False
        self.scene().clearSelection()
        badge.setSelected(True)
        if center:
            self.centerOn(badge)
        return True

    # -- interaction --------------------------------------------------------------------
    def _on_selection(self) -> None:
        try:
            items = self.scene().selectedItems()
        except RuntimeError:
            return
        for item in items:
            if isinstance(item, BadgeItem) and item.value_id is not None:
                self.valueSelected.emit(item.value_id)
                return
            if isinstance(item, NodeItem):
                node = item.node
                if node.kind == "input" and node.value is not None:
                    self.valueSelected.emit(node.value)
                elif node.op is not None:
                    self.opSelected.emit(node.op)
                    op = self.session.graph.ops[node.op]
                    if op.results:
                        self.valueSelected.emit(op.results[0])
                return

    def mouseDoubleClickEvent(self, event) -> None:
        item = self.itemAt(event.position().toPoint())
        if isinstance(item, NodeItem):
            node = item.node
            if node.kind == "scope":
                self.set_expanded(node.scope, True, background=True)
            elif node.op is not None:
                self.enter_op(node.op)
            event.accept()
            return
        if isinstance(item, ScopeBoxItem):
            self.set_expanded(item.box.path, False, background=True)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def node_menu(self, item: NodeItem) -> QMenu:
        """Actions on a node: enter each region or the callee, unfold, fold its scopes."""
        menu = QMenu(self)
        node = item.node
        graph = self.session.graph
        if node.kind == "scope":
            menu.addAction(
                f"Expand {node.scope}",
                lambda: self.set_expanded(node.scope, True, background=True),
            )
        if node.op is not None:
            op = graph.ops[node.op]
            if op.callee and op.callee in graph.functions:
                menu.addAction(f"Enter @{op.callee}", lambda: self.enter_op(op.id))
            for i, name in enumerate(region_names(op)):
                menu.addAction(f"Enter {name}", lambda i=i: self.enter_op(op.id, i))
        if node.scope and node.kind == "op":
            parts = node.scope.split("/")
            for k in range(len(parts), 0, -1):
                path = "/".join(parts[:k])
                menu.addAction(
                    f"Fold {path}", lambda p=path: self.set_expanded(p, False, background=True)
                )
        if menu.actions():
            menu.addSeparator()
        self._add_fold_all(menu)
        return menu

    def background_menu(self) -> QMenu:
        """Actions on the whole frame (a right-click off the nodes)."""
        menu = QMenu(self)
        self._add_fold_all(menu)
        return menu

    def _add_fold_all(self, menu: QMenu) -> None:
        menu.addAction("Expand all scopes", self.expand_all)
        menu.addAction("Collapse all scopes", self.collapse_all)

    def contextMenuEvent(self, event) -> None:
        item = self.itemAt(event.pos())
        if isinstance(item, NodeItem):
            self.node_menu(item).exec(event.globalPos())
            event.accept()
            return
        if item is None and self.layout_ is not None:
            self.background_menu().exec(event.globalPos())
            event.accept()
            return
        super().contextMenuEvent(event)

    def wheelEvent(self, event) -> None:
        factor = 1.0015 ** event.angleDelta().y()
        self.zoom(factor)
        event.accept()

    def zoom(self, factor: float) -> None:
        """Scale the view by ``factor`` (kept between 2% and 400%)."""
        scale = self.transform().m11()
        factor = max(0.02 / scale, min(4.0 / scale, factor))
        self._fitted = False
        # send the blocks the zoom changed (the empty background stays), not the view
        with shifted_change(self):
            self.scale(factor, factor)
        self.viewMoved.emit()

    def fit(self) -> None:
        """Fit the drawing, but never shrink text below legibility on large graphs:
        very wide frames start at a readable zoom at their top instead."""
        rect = self.scene().sceneRect()
        if rect.isEmpty():
            return
        self._fitting = True
        try:
            self.resetTransform()
            vw, vh = max(1, self.viewport().width()), max(1, self.viewport().height())
            scale = min(vw / rect.width(), vh / rect.height(), 1.25)
            small = self.layout_ is not None and len(self.layout_.nodes) <= SMALL_FRAME_NODES
            if scale >= MIN_FIT_SCALE or small:
                self.scale(scale, scale)
                self.centerOn(rect.center())
            else:
                scale = MIN_FIT_SCALE
                self.scale(scale, scale)
                self.centerOn(QPointF(rect.center().x(), rect.top() + vh / scale / 2))
        finally:
            self._fitting = False
        self._fitted = True
        self.viewMoved.emit()

    def resizeEvent(self, event) -> None:
        fitted, self._fitting = self._fitted, True
        try:
            super().resizeEvent(event)
        finally:
            self._fitting = False
        if fitted:
            self.fit()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        if not self._fitting:
            self._fitted = False
        self.viewMoved.emit()

    def fit_all(self) -> None:
        """Fit everything regardless of legibility."""
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        self.viewMoved.emit()

    # -- drag and drop of mesh axes ---------------------------------------------------------
    def _badge_dim_at(self, pos) -> tuple[BadgeItem | None, int | None]:
        scene_pos = self.mapToScene(pos)
        for item in self.scene().items(scene_pos):
            if isinstance(item, BadgeItem):
                return item, item.dim_at(scene_pos)
        # Forgiving: the nearest badge within a few pixels.
        for item in self.items(pos.x() - 6, pos.y() - 6, 12, 12):
            if isinstance(item, BadgeItem):
                return item, item.dim_at(scene_pos)
        return None, None

    def _set_hover(self, badge: BadgeItem | None, dim: int | None) -> None:
        if self._hover_badge is not None and self._hover_badge is not badge:
            self._hover_badge.hover_dim = None
            self._hover_badge.update()
        self._hover_badge = badge
        if badge is not None and badge.hover_dim != dim:
            badge.hover_dim = dim
            badge.update()

    def dragEnterEvent(self, event) -> None:
        ours, _ = axis_from_mime(event.mimeData())
        if ours:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        ours, _ = axis_from_mime(event.mimeData())
        if not ours:
            event.ignore()
            return
        badge, dim = self._badge_dim_at(event.position().toPoint())
        self._set_hover(badge, dim)
        if badge is not None and dim is not None:
            event.acceptProposedAction()
            # whether the drop replaces the axes the dim shows or appends to them
            spec = self.session.display_spec(badge.value_id)
            held = spec.dims[dim].axes if spec is not None and dim < len(spec.dims) else ()
            hint = drop_hint(held, axis_from_mime(event.mimeData())[1], appends(event))
            if hint:
                QToolTip.showText(self.mapToGlobal(event.position().toPoint()), hint, self)
            else:
                QToolTip.hideText()
        else:
            event.ignore()

    def dragLeaveEvent(self, event) -> None:
        self._set_hover(None, None)
        QToolTip.hideText()
        super().dragLeaveEvent(event)

    def dropEvent(self, event) -> None:
        ours, axis = axis_from_mime(event.mimeData())
        self._set_hover(None, None)
        QToolTip.hideText()
        if not ours:
            event.ignore()
            return
        badge, dim = self._badge_dim_at(event.position().toPoint())
        if badge is None or dim is None:
            self.dropRejected.emit("drop a mesh axis on a dimension of a tensor's badge")
            event.ignore()
            return
        event.acceptProposedAction()
        if axis is not None and appends(event):
            self.axisAppended.emit(badge.value_id, dim, axis)
        else:
            self.specDropped.emit(badge.value_id, dim, axis)

    def sizeHint(self) -> QSize:
        return QSize(900, 700)
