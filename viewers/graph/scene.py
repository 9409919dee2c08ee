"""The drawing of one laid-out frame: node, edge, badge and scope-region items.

``GraphScene`` turns a ``GraphLayout`` into graphics items and keeps each spec badge
showing its value's current spec in the session; it reads the session, never edits it.
Where the user is and what they do with the drawing is the view's business.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGraphicsScene, QWidget

from shardscope.backend.program.layout import GraphLayout
from shardscope.viewers.common.value_text import badge_tooltip
from shardscope.viewers.graph.items import BadgeItem, EdgeItem, GraphStyle, NodeItem
from shardscope.viewers.graph.spatial import RectIndex
from shardscope.viewers.graph.staging import StagedDrawing

if TYPE_CHECKING:
    from shardscope.backend.session.document import Session

# Margin around the drawing, in scene units, so nothing sits on the view's edge.
MARGIN = 60


class GraphScene(QGraphicsScene):
    """Items of the frame last added; see the module docstring.

    ``drawn`` fires after a layout's items were added (overlays such as the step overlay
    and the markers draw themselves again);
    ``spec_override(value_id, spec, origin)``, when set, gives the ``(spec, origin)`` a
    badge shows instead of the session's (a propagation step's state);
    ``mode_override``, of the same form, is applied before it (what a side-by-side pane
    shows: the state before the last edit, or GSPMD's).
    """

    drawn = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.nodes: list[NodeItem] = []
        self.badges: list[BadgeItem] = []
        self.edges: list[EdgeItem] = []
        self._badges_by_value: dict[int, list[BadgeItem]] = {}
        self.spec_override = None
        self.mode_override = None
        # The badges the scope names were placed around (its counts are benchmarked).
        self.header_index: RectIndex | None = None
        # The drawing being built in slices, if any (edits meanwhile are noted on it).
        self.staging: StagedDrawing | None = None

    def clear_items(self) -> None:
        """Remove every item (and the selection)."""
        self.clearSelection()
        self.clear()
        self.nodes, self.badges, self.edges = [], [], []
        self._badges_by_value = {}

    def add_layout(self, layout: GraphLayout, style: GraphStyle) -> None:
        """Draw ``layout``: a node per layout node, a badge under each input and on each
        short edge, an edge per layout edge, a region per expanded scope."""
        self.show_staged(StagedDrawing(self.refresh_badge, layout, style).build())

    def stage(self, layout: GraphLayout, style: GraphStyle) -> StagedDrawing:
        """A drawing of ``layout`` to build in slices (``StagedDrawing.steps``) and show
        with ``show_staged``; until then, edits to specs are noted on it."""
        staged = StagedDrawing(self.refresh_badge, layout, style)
        self.staging = staged
        return staged

    def show_staged(self, staged: StagedDrawing) -> None:
        """Replace every item by the finished drawing ``staged``."""
        for _ in self.showing(staged, None):
            pass

    def showing(self, staged: StagedDrawing, budget_s: float | None) -> Iterator[int]:
        """Replace every item by the finished drawing ``staged``, yielding after about
        ``budget_s`` seconds of adding items (None: only at the end). From the first
        step on, the scene's lists are the new drawing's (edits refresh its badges);
        ``drawn`` fires once every item is in, and the last step yields -1."""
        if self.staging is staged:
            self.staging = None
        self.clear_items()
        self.nodes, self.badges, self.edges = staged.nodes, staged.badges, staged.edges
        self._badges_by_value = staged.badges_by_value
        self.header_index = staged.header_index
        deadline = time.perf_counter() + budget_s if budget_s is not None else None
        for n, item in enumerate(staged.items, 1):
            self.addItem(item)
            if deadline is not None and not n % 256 and time.perf_counter() > deadline:
                yield n
                deadline = time.perf_counter() + budget_s
        if staged.stale_all:
            self.refresh_all()
        else:
            self.refresh_values(staged.stale_values)
        self.setSceneRect(staged.bounds.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN))
        self.drawn.emit()
        yield -1

    def set_mode_override(self, override) -> None:
        """Badges show ``override``'s spec before any step override (None: the
        session's); every badge is drawn again."""
        self.mode_override = override
        self.refresh_all()

    def apply_style(self, style: GraphStyle) -> None:
        """Redraw every item with ``style``."""
        for item in self.nodes + self.badges:
            item.style = style
            item.update()
        for edge in self.edges:
            edge.style = style
            edge.apply_style()
        self.refresh_all()
        self.update()

    # -- badges -------------------------------------------------------------------------
    def badges_of(self, value_id: int) -> list[BadgeItem]:
        """The badges that show ``value_id`` (alone or among others)."""
        return self._badges_by_value.get(value_id, [])

    def refresh_values(self, value_ids) -> None:
        """Show the current specs of ``value_ids``."""
        if self.staging is not None:
            self.staging.note_values(value_ids)
        for vid in value_ids:
            for badge in self._badges_by_value.get(vid, ()):
                self.refresh_badge(badge)

    def refresh_all(self) -> None:
        """Show the current spec on every badge (the mesh or propagation changed)."""
        if self.staging is not None:
            self.staging.note_all()
        for badge in self.badges:
            self.refresh_badge(badge)

    def refresh_badge(self, badge: BadgeItem) -> None:
        """Show the session's current spec of the badge's value, and where it came from."""
        session = self.session
        graph = session.graph
        mesh_axes = session.mesh.axis_names if session.mesh is not None else ()
        if badge.value_id is None:
            names = [graph.values[v].display_name for v in badge.value_ids]
            badge.set_spec(None, "none", mesh_axes, "\n".join(names[:20]))
            return
        vid = badge.value_id
        value = graph.values[vid]
        spec = session.display_spec(vid)
        origin = session.origin(vid)
        if self.mode_override is not None:
            spec, origin = self.mode_override(vid, spec, origin)
        if self.spec_override is not None:
            spec, origin = self.spec_override(vid, spec, origin)
        dims = [d.axes for d in spec.dims] if spec is not None else None
        if spec is None and value.rank == 0:
            dims = []
        analysis = session.analysis
        compiled = analysis.compiled_shardings.get(vid) if analysis is not None else None
        badge.set_spec(dims, origin, mesh_axes, badge_tooltip(value, spec, origin, compiled))
