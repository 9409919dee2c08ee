"""A frame's drawing built a slice at a time, off the scene, then shown in one go.

Unfolding every scope of a large program makes tens of thousands of items. Building
them all in one call blocks the window for about a second; ``StagedDrawing`` builds the
same items (nodes, badges, edges, scope regions) in slices through ``steps()``, so the
view can let the event loop run between slices. Nothing is added to the scene until
``GraphScene.show_staged`` swaps the finished drawing in, so the old drawing stays
whole (and usable) meanwhile, and a drawing dropped half-way leaves no trace.

Badges show the session's specs as they were when each badge was made; edits made
while the drawing is built are noted (``note_values`` / ``note_all``) and those badges
are refreshed when it is shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import QRectF

from shardscope.backend.collector import paused
from shardscope.backend.program.layout import GraphLayout
from shardscope.backend.program.placement import NODE_H
from shardscope.viewers.graph.items import (
    BadgeItem,
    EdgeItem,
    GraphStyle,
    NodeItem,
    ScopeBoxItem,
    row_centres,
    spread_badges,
)
from shardscope.viewers.graph.spatial import RectIndex

# Items made between two checks of the clock (a check costs little; items are ~0.1 ms).
CHECK_EVERY = 64


class _Clock:
    """Counts the items made and says when a step's time is up, reading the clock only
    every ``CHECK_EVERY`` units of work."""

    def __init__(self, budget_s: float | None) -> None:
        self.budget_s = budget_s
        self.deadline = time.perf_counter() + budget_s if budget_s is not None else None
        self.made = 0
        self.unchecked = 0  # work done since the clock was last read

    def tick(self, work: int = 1) -> bool:
        """One more item made, at the cost of ``work``: whether to yield now."""
        self.made += 1
        self.unchecked += work
        if self.deadline is None or self.unchecked < CHECK_EVERY:
            return False
        self.unchecked = 0
        now = time.perf_counter()
        if now < self.deadline:
            return False
        self.deadline = now + self.budget_s
        return True


class StagedDrawing:
    """The items of ``layout`` drawn with ``style``, made by ``steps()``; see the module
    docstring. ``refresh_badge(badge)`` gives a new badge its value's spec (the scene's).
    ``done`` once every item is made."""

    def __init__(
        self,
        refresh_badge: Callable[[BadgeItem], None],
        layout: GraphLayout,
        style: GraphStyle,
    ) -> None:
        self.refresh_badge = refresh_badge
        self.layout = layout
        self.style = style
        self.nodes: list[NodeItem] = []
        self.badges: list[BadgeItem] = []
        self.edges: list[EdgeItem] = []
        self.boxes: list[ScopeBoxItem] = []
        self.badges_by_value: dict[int, list[BadgeItem]] = {}
        self.header_index: RectIndex | None = None
        self.bounds = QRectF()
        self.done = False
        self._order: list = []
        self.stale_values: set[int] = set()
        self.stale_all = False

    # -- edits made while building --------------------------------------------------------
    def note_values(self, value_ids) -> None:
        """The specs of ``value_ids`` changed: refresh their badges when shown."""
        self.stale_values.update(value_ids)

    def note_all(self) -> None:
        """Every badge may show an old spec (mesh, propagation or override changed)."""
        self.stale_all = True

    # -- building ---------------------------------------------------------------------------
    def build(self) -> StagedDrawing:
        """Make every item now, in one go (the garbage collector paused meanwhile: see
        ``backend.collector``)."""
        with paused():
            for _ in self.steps(None):
                pass
        return self

    def steps(self, budget_s: float | None) -> Iterator[int]:
        """Make the items, yielding after about ``budget_s`` seconds of work each time
        (None: only at the end); yields the number of items made so far."""
        clock = _Clock(budget_s)
        yield from self._make_nodes(clock)
        yield from self._make_edges(clock)
        spread_badges(self.badges)
        yield clock.made
        if self.layout.boxes:
            yield from self._make_boxes(clock)
        yield from self._measure(clock)
        self.done = True
        yield clock.made

    def _make_nodes(self, clock: _Clock) -> Iterator[int]:
        """A card per node, and a badge under each input."""
        style = self.style
        for i, node in enumerate(self.layout.nodes):
            item = NodeItem(i, node, style)
            self.nodes.append(item)
            self._order.append(item)
            if node.kind == "input" and node.value is not None:
                badge = BadgeItem((node.value,), style)
                badge.setPos(node.x, node.y + NODE_H / 2 + 14)
                self._add_badge(badge)
            if clock.tick():
                yield clock.made

    def _make_edges(self, clock: _Clock) -> Iterator[int]:
        """A curve per edge, and a badge on each short edge not leaving an input."""
        layout, style = self.layout, self.style
        for edge in layout.edges:
            item = EdgeItem(edge, style)
            self.edges.append(item)
            self._order.append(item)
            src = layout.nodes[edge.src]
            if not (edge.long or src.kind == "input"):
                (x0, y0), (x1, y1) = edge.points[0], edge.points[1]
                badge = BadgeItem(edge.values, style)
                badge.setPos((x0 + x1) / 2, y0 + min(38.0, (y1 - y0) / 2))
                self._add_badge(badge)
            if clock.tick():
                yield clock.made

    def _make_boxes(self, clock: _Clock) -> Iterator[int]:
        """A box per expanded scope, its name placed clear of the badges and other names."""
        layout = self.layout
        index = RectIndex(())
        for badge in self.badges:
            r = badge.sceneBoundingRect()
            index.add((r.x(), r.y(), r.width(), r.height()))
            if clock.tick():
                yield clock.made
        self.header_index = index
        deepest = max(box.depth for box in layout.boxes)
        names = RectIndex(())  # the scope names placed so far: no name over another
        rows = row_centres(layout.nodes)
        for box in layout.boxes:
            nodes = [layout.nodes[i] for i in box.nodes]
            item = ScopeBoxItem.around(
                box, nodes, deepest - box.depth, self.style, index, names, rows
            )
            self.boxes.append(item)
            self._order.append(item)
            if clock.tick(CHECK_EVERY):  # a region costs as much as many cards
                yield clock.made

    def _measure(self, clock: _Clock) -> Iterator[int]:
        """The bounds of every item made."""
        bounds = QRectF()
        for item in self._order:
            # the items made here have no children of their own (marks are added later)
            bounds = bounds.united(item.sceneBoundingRect())
            if clock.tick():
                yield clock.made
        self.bounds = bounds

    def _add_badge(self, badge: BadgeItem) -> None:
        self.badges.append(badge)
        self._order.append(badge)
        for vid in badge.value_ids:
            self.badges_by_value.setdefault(vid, []).append(badge)
        self.refresh_badge(badge)

    @property
    def items(self) -> list:
        """Every item, in the order it was made (the order they go into the scene)."""
        return list(self._order)
