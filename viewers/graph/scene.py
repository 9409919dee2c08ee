"""The drawing of one laid-out frame: node, edge, badge and scope-region items.

``GraphScene`` turns a ``GraphLayout`` into graphics items and keeps each spec badge
showing its value's current spec in the session; it reads the session, never edits it.
Where the user is and what they do with the drawing is the view's business.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGraphicsScene, QWidget

from shardscope.backend.program.layout import NODE_H, GraphLayout
from shardscope.viewers.common.value_text import badge_tooltip
from shardscope.viewers.graph.items import (
    BadgeItem,
    EdgeItem,
    GraphStyle,
    NodeItem,
    ScopeBoxItem,
    spread_badges,
)
from shardscope.viewers.graph.spatial import RectIndex

if TYPE_CHECKING:
    from shardscope.backend.session.document import Session

# Margin around the drawing, in scene units, so nothing sits on the view's edge.
MARGIN = 60


class GraphScene(QGraphicsScene):
    """Items of the frame last added; see the module docstring.

    ``drawn`` fires after a layout's items were added (overlays such as the step overlay
    and the markers draw themselves again);
    ``spec_override(value_id, spec, origin)``, when set, gives the ``(spec, origin)`` a
    badge shows instead of the session's (a propagation step's state).
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
        # The badges the scope names were placed around (its counts are benchmarked).
        self.header_index: RectIndex | None = None

    def clear_items(self) -> None:
        """Remove every item (and the selection)."""
        self.clearSelection()
        self.clear()
        self.nodes, self.badges, self.edges = [], [], []
        self._badges_by_value = {}

    def add_layout(self, layout: GraphLayout, style: GraphStyle) -> None:
        """Draw ``layout``: a node per layout node, a badge under each input and on each
        short edge, an edge per layout edge, a region per expanded scope."""
        for i, node in enumerate(layout.nodes):
            item = NodeItem(i, node, style)
            self.addItem(item)
            self.nodes.append(item)
            if node.kind == "input" and node.value is not None:
                badge = BadgeItem((node.value,), style)
                badge.setPos(node.x, node.y + NODE_H / 2 + 14)
                self._add_badge(badge)
        for edge in layout.edges:
            item = EdgeItem(edge, style)
            self.addItem(item)
            self.edges.append(item)
            src = layout.nodes[edge.src]
            if edge.long or src.kind == "input":
                continue
            (x0, y0), (x1, y1) = edge.points[0], edge.points[1]
            badge = BadgeItem(edge.values, style)
            badge.setPos((x0 + x1) / 2, y0 + min(38.0, (y1 - y0) / 2))
            self._add_badge(badge)
        spread_badges(self.badges)
        self._add_boxes(layout, style)
        bounds = self.itemsBoundingRect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
        self.setSceneRect(bounds)
        self.drawn.emit()

    def _add_boxes(self, layout: GraphLayout, style: GraphStyle) -> None:
        """A region around each expanded scope (see ``ScopeBoxItem.around``)."""
        if not layout.boxes:
            return
        deepest = max(box.depth for box in layout.boxes)
        rects = (badge.sceneBoundingRect() for badge in self.badges)
        badges = RectIndex((r.x(), r.y(), r.width(), r.height()) for r in rects)
        self.header_index = badges
        for box in layout.boxes:
            nodes = [layout.nodes[i] for i in box.nodes]
            item = ScopeBoxItem.around(box, nodes, deepest - box.depth, style, badges)
            self.addItem(item)

    def _add_badge(self, badge: BadgeItem) -> None:
        self.addItem(badge)
        self.badges.append(badge)
        for vid in badge.value_ids:
            self._badges_by_value.setdefault(vid, []).append(badge)
        self.refresh_badge(badge)

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
        for vid in value_ids:
            for badge in self._badges_by_value.get(vid, ()):
                self.refresh_badge(badge)

    def refresh_all(self) -> None:
        """Show the current spec on every badge (the mesh or propagation changed)."""
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
        if self.spec_override is not None:
            spec, origin = self.spec_override(vid, spec, origin)
        dims = [d.axes for d in spec.dims] if spec is not None else None
        if spec is None and value.rank == 0:
            dims = []
        badge.set_spec(dims, origin, mesh_axes, badge_tooltip(value, spec, origin))
