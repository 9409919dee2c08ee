"""The program graph: a layered drawing of one function or region, with spec badges.

``GraphView`` observes a ``shardscope.backend.session.document.Session`` and never edits
it: selections, drops of mesh axes on badge dimensions, entering regions and folding
scopes are emitted as signals; the app turns edits into undoable commands. Only the
visible part of the program (one frame, folded to its expanded scopes) is laid out, once
per expansion state (``LayoutCache``), and spec changes repaint just the badges of the
tensors that changed. Where the user is (frames, unfolded scopes) is the view's
``Navigation``: the view writes each place it draws there, and draws the places other
views sharing it write. What the mouse does is handled beside it (``Gestures``,
``BadgeDrops``); its ``GraphScene`` holds the drawing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QSize, Qt, Signal
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsView, QWidget

from shardscope.backend.program.layout import (
    Frame,
    FrameIndex,
    GraphLayout,
    all_scopes,
    build_layout,
    default_expanded,
    main_region,
    scope_paths,
)
from shardscope.backend.session.navigation import Navigation, place_json
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.colors import THEMES, theme_for
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.damage import shifted_change
from shardscope.viewers.graph.drops import BadgeDrops
from shardscope.viewers.graph.gestures import Gestures
from shardscope.viewers.graph.items import BadgeItem, GraphStyle, NodeItem
from shardscope.viewers.graph.layout_cache import LayoutCache
from shardscope.viewers.graph.moves import moves_from, node_points, scope_anchor, snap_to
from shardscope.viewers.graph.scene import GraphScene
from shardscope.viewers.graph.sliced import SlicedDrawing

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.session.document import Session

# Fitting a large frame stops at this zoom (labels stay legible) and shows its top.
MIN_FIT_SCALE = 0.6
# A frame of at most this many nodes is small: fitting shows all of it, at whatever zoom
# that takes (a user zooms in on a part of a small graph, but first sees its whole shape).
SMALL_FRAME_NODES = 24


def _set_up_drawing(view: QGraphicsView) -> None:
    """How the graph is painted and dragged: antialiased, repainting only what changed,
    scrolled by dragging the background, zoomed about the mouse, taking drops."""
    view.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    view.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
    view.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
    view.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
    view.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
    view.setAcceptDrops(True)


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
    programShown = Signal()  # a new program (or none) drawn where it opens
    foldStarted = Signal(str)  # what a drawing built in slices does
    foldEnded = Signal(str)  # "done", "cancelled", "dropped" (the view changed) or an error

    def __init__(
        self,
        session: Session,
        parent: QWidget | None = None,
        *,
        restore: bool = True,
        navigation: Navigation | None = None,
    ) -> None:
        """``restore``: open a program where the session's view state says (the frames
        and unfolded scopes it saved, written to ``navigation``), else at its outermost
        frame, as it opens first (``follow_navigation`` then shows the model's place).
        ``navigation``: the model of place, shared with the views that show the same
        place (a model of its own by default)."""
        super().__init__(parent)
        self.session = session
        self.restore = restore
        self.navigation = navigation if navigation is not None else Navigation()
        self._program: Program | None = None  # the program drawn
        # drawing what another view sharing the navigation did (see ``ViewSync``)
        self.following = False
        self._links = Connections()
        self._place_links = Connections()
        self.graph_scene = GraphScene(session, self)
        self.setScene(self.graph_scene)
        _set_up_drawing(self)
        self.set_style_theme(None)
        self.index: FrameIndex | None = None
        self._frames: list[Frame] = []
        self._expanded: dict[str, frozenset[str]] = {}
        self._cache = LayoutCache()
        self._find_state: tuple[str | None, int] = (None, -1)
        # Fitted and not moved since: a resize fits again (a window manager may size the
        # window only after the program loaded, which left small graphs unfitted).
        self._fitted = False
        self._fitting = False
        self.layout_: GraphLayout | None = None
        # One scope drawn on its own (``show_scope``), or None for the whole frame.
        self.within: str | None = None
        self.drops = BadgeDrops(self)
        self.layout_seconds = 0.0
        self._init_slices()
        self.gestures = Gestures(self)
        ev, scene, links = session.events, self.graph_scene, self._links
        links.connect(ev.program, self._on_program_change)
        links.connect(ev.specs, scene.refresh_values)
        for redrawn in (ev.mesh, ev.propagation):
            links.connect(redrawn, lambda _new: scene.refresh_all())
        links.connect(ev.final_specs, scene.refresh_all)
        # A value XLA compiled otherwise than propagated says so on its badge.
        links.connect(ev.compiled, lambda a: scene.refresh_values(list(a.compiled_shardings)))
        self.use_navigation(self.navigation)
        if session.program is not None:
            self._on_program_change(session.program)

    # -- model events -----------------------------------------------------------------
    def close(self) -> bool:
        self.cancel_fold("dropped")
        self._links.close()
        self._place_links.close()
        return super().close()

    def use_navigation(self, navigation: Navigation) -> None:
        """Show the place ``navigation`` holds from its next change on (and write what
        the user does to it)."""
        self._place_links.close()
        self.navigation = navigation
        self._place_links.connect(navigation.events.changed, self.follow_navigation)

    def follow_navigation(self, *, fit: bool = False) -> None:
        """Show the place the navigation holds (drawn in slices where the frame is
        large), unless it is what the view shows (a drawing under way goes on) or the
        view's program is not the session's yet (it shows the place once it took the
        program)."""
        nav = self.navigation
        if self._program is None or self._program is not self.session.program or not nav.frames:
            return
        try:
            shown = nav.unfolded()
            if shown is None:
                shown = default_expanded(self.session.graph, self.index, nav.frame)
        except (KeyError, IndexError, ValueError):
            return  # a place in another program
        if (tuple(f.key() for f in nav.frames), shown) == self.state_key():
            return
        self.following = True
        try:
            self.show_state(
                list(nav.frames), nav.unfolded_map(), what="Drawing the other pane alike", fit=fit
            )
        finally:
            self.following = False

    def _on_program_change(self, program: Program | None) -> None:
        self.cancel_fold("dropped")
        self._cache.clear()
        self._find_state = (None, -1)
        self._expanded.clear()
        self._program = program
        if program is None:
            self.index = None
            self._frames = []
            self.graph_scene.clear()
            self.programShown.emit()
            return
        graph = program.graph
        self.index = FrameIndex(graph)
        try:
            saved = Navigation.from_json(self.session.view) if self.restore else Navigation()
        except ValueError:
            saved = Navigation()
        frames = list(saved.frames) or [Frame(graph.main)]
        self._expanded = saved.unfolded_map()
        try:
            for frame in frames:  # the breadcrumb names each one, not just the shown one
                frame.title(graph)
                self.index.frame_inputs(frame)
            self._frames = frames
            self._rebuild(fit=True)
        except (KeyError, IndexError, ValueError):
            self._frames = [Frame(graph.main)]
            self._expanded = {}
            self._rebuild(fit=True)
        if self.restore:
            self.navigation.show(self._frames, self._expanded)
        self.programShown.emit()

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
            self._expanded[key] = default_expanded(self.session.graph, self.index, frame)
        return self._expanded[key]

    def view_state(self) -> dict:
        """JSON-able view state of what the view shows: the frame stack and the expanded
        scopes per frame (``navigation.place_json``)."""
        return place_json(self._frames, self._expanded)

    def set_style_theme(self, name: str | None) -> None:
        """Redraw with the ``dark`` or ``light`` theme (None: follow the palette)."""
        theme = THEMES[name] if name in THEMES else theme_for(self)
        font = QFont(self.font())
        font.setPointSizeF(10.5)
        small = QFont(self.font())
        small.setPointSizeF(9.0)
        self.style_ = GraphStyle(theme, font, small)
        self.setBackgroundBrush(theme.background)
        self.graph_scene.apply_style(self.style_)

    def show_scope(self, path: str) -> None:
        """Draw only scope ``path`` of the current frame, fully unfolded, with the values
        it takes and hands on as input and output nodes (for pictures of one scope)."""
        frame = self.frame
        self.within = path
        self._expanded[frame.key()] = frozenset(
            scope_paths(self.session.graph, self.index, frame, path)
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
            anchor = scope_anchor(self, self.nodes, path)
        if background and self.in_slices and self.is_large(self.frame):
            target = {**self._expanded, self.frame.key(): frozenset(current)}
            what = f"{'Unfolding' if expanded else 'Folding'} {path}"
            self.show_state(list(self._frames), target, what=what, keep=anchor)
            return
        self._expanded[self.frame.key()] = frozenset(current)
        # what lies below the scope moves as one: scroll it rather than send it again
        before = node_points(self, self.nodes)
        with shifted_change(self, moves_from(self, lambda: self.nodes, before)):
            self._rebuild(fit=False, keep=anchor)
            if self.layout_.in_place:
                snap_to(self, self.nodes, before)
        self._emit_state()

    def collapse_all(self) -> None:
        """Fold every scope of the current frame."""
        self._set_all(frozenset())

    def expand_all(self) -> None:
        """Unfold every scope of the current frame."""
        if self.index is None or not self._frames:
            return
        self._set_all(frozenset(all_scopes(self.session.graph, self.index, self.frame)))

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
        # the views sharing the navigation follow before the signals below go out
        self.navigation.show(self._frames, self._expanded)
        self.frameChanged.emit(self.frame.key() if self.frame else "")
        self.viewStateChanged.emit(self.view_state())

    # -- building ---------------------------------------------------------------------
    def share_layouts(self, other: GraphView) -> None:
        """Use ``other``'s layouts (two views of one program lay out each state once)."""
        self._cache = other._cache

    def _rebuild(self, *, fit: bool, keep=None) -> None:
        self._finish_committed()  # a drawing half in the scene goes in whole first
        scene = self.graph_scene
        scene.clear_items()
        self.drops.forget()
        frame, shown, within = self.frame, self.expanded(), self.within
        layout, seconds = self._cache.get_or_build(
            (frame.key(), shown, within),
            lambda: build_layout(self.session.graph, frame, shown, index=self.index, within=within),
        )
        if seconds is not None:
            self.layout_seconds = seconds
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
        frame_ops = set(self.index.frame_ops(self.frame))
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
        top = self.index.ancestor_in(op_id, self.frame, set(self.index.frame_ops(self.frame)))
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

    # -- drag and drop of mesh axes (``drops``) ---------------------------------------------
    def dragEnterEvent(self, event) -> None:
        self.drops.enter(event)

    def dragMoveEvent(self, event) -> None:
        self.drops.move(event)

    def dragLeaveEvent(self, event) -> None:
        self.drops.leave()
        super().dragLeaveEvent(event)

    def dropEvent(self, event) -> None:
        self.drops.drop(event)

    def sizeHint(self) -> QSize:
        return QSize(900, 700)
