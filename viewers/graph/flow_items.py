"""The items a step overlay draws: a path that keeps its width on screen whatever the
zoom and takes no clicks, and a flow along an edge, drawn in short pieces made only near
what the view shows, so that a flow across a large drawing costs what is on screen."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

# Length of the pieces a flow's curve is drawn in: pixels at the view's zoom (scene units
# at zoom 1) ...
PIECE = 24.0
# ... or, along a horizontal or vertical line (one that strays no more than ``THIN``),
# longer: such a piece's box is a thin band.
THIN = 2.0
STRAIGHT_PIECE = 400.0


class OverlayItem(QGraphicsPathItem):
    """A drawn-only path: it never takes a click, a hover or a drop from what lies under it."""

    def __init__(self, path: QPainterPath, scale: float) -> None:
        super().__init__(path)
        # the pen is cosmetic (pixels at any zoom): its half-width in scene units at the
        # view's zoom when drawn, so repaints cover the stroke and no more
        self._scale = max(scale, 0.02)

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def boundingRect(self) -> QRectF:
        # Qt derives a path item's bounds from shape(), which is empty here
        w = self.pen().widthF() / (2 * self._scale) + 1
        return self.path().controlPointRect().adjusted(-w, -w, w, w)


class FlowItem(OverlayItem):
    """A step's flow along one edge. It keeps the whole path and pen (what it shows), but
    short pieces of the curve draw it: adding or removing it repaints a band along the
    stroke instead of the curve's whole bounding box (a long diagonal edge's box is mostly
    background, and over a forwarded display every repainted pixel is sent). Only the
    pieces that ``cover`` asked for are made: an edge across a whole unfolded model has
    thousands of them, and the overlay makes those near what the view shows."""

    def __init__(self, path: QPainterPath, scale: float, pen: QPen, runs=None) -> None:
        super().__init__(path, scale)
        self.setPen(pen)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
        self.pieces: list[OverlayItem] = []
        self._runs = edge_runs(path, PIECE / self._scale) if runs is None else runs
        # (run, piece) of the pieces made
        self._made: set[tuple[int, int]] = set()

    def boundingRect(self) -> QRectF:
        return QRectF()

    def cover(self, rect: QRectF | None = None) -> None:
        """Make the pieces that meet ``rect`` (all of them when None)."""
        if rect is not None:
            x0, y0, x1, y1 = rect.left(), rect.top(), rect.right(), rect.bottom()
        made = self._made
        for r, (bx0, by0, bx1, by1, points, count) in enumerate(self._runs):
            if rect is not None and (bx0 > x1 or bx1 < x0 or by0 > y1 or by1 < y0):
                continue
            if count == 1:
                if (r, 0) not in made:
                    made.add((r, 0))
                    self._add(points)
                continue
            (ax, ay), (cx, cy) = points
            lo, hi = 0, count
            if rect is not None:
                # the pieces of this straight run inside the rect: clip its parameter
                t0, t1 = _clip(ax, ay, cx, cy, x0, y0, x1, y1)
                lo, hi = max(0, math.floor(t0 * count)), min(count, math.ceil(t1 * count))
            for k in range(lo, hi):
                if (r, k) not in made:
                    made.add((r, k))
                    s, e = k / count, (k + 1) / count
                    self._add(
                        (
                            (ax + (cx - ax) * s, ay + (cy - ay) * s),
                            (ax + (cx - ax) * e, ay + (cy - ay) * e),
                        )
                    )

    def _add(self, points) -> None:
        path = QPainterPath(QPointF(*points[0]))
        for point in points[1:]:
            path.lineTo(QPointF(*point))
        item = OverlayItem(path, self._scale)
        item.setPen(self.pen())
        item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        item.setParentItem(self)
        self.pieces.append(item)


def _clip(ax, ay, cx, cy, x0, y0, x1, y1) -> tuple[float, float]:
    """The parameter range of the segment from a to c inside the box (empty: lo >= hi)."""
    lo, hi = 0.0, 1.0
    for start, delta, low, high in ((ax, cx - ax, x0, x1), (ay, cy - ay, y0, y1)):
        if abs(delta) < 1e-9:
            if start < low or start > high:
                return 1.0, 0.0
            continue
        t_a, t_b = (low - start) / delta, (high - start) / delta
        if t_a > t_b:
            t_a, t_b = t_b, t_a
        lo, hi = max(lo, t_a), min(hi, t_b)
    return lo, hi


def edge_runs(path: QPainterPath, piece: float = PIECE) -> list[tuple]:
    """``path`` as runs to cut pieces from, each (x0, y0, x1, y1, points, count): its box,
    its points and how many pieces it is cut into. A run is a polyline of short segments
    about ``piece`` scene units long (one piece), or one long straight segment cut into
    pieces ``piece`` long, or ``STRAIGHT_PIECE`` long where it is horizontal or vertical
    (such a piece's box is a thin band however long)."""
    runs: list[tuple] = []

    def close(points: list[tuple[float, float]]) -> None:
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        runs.append((min(xs), min(ys), max(xs), max(ys), tuple(points), 1))

    for polygon in path.toSubpathPolygons():
        points = [(p.x(), p.y()) for p in polygon]
        current = points[:1]
        run = 0.0
        for (ax, ay), (cx, cy) in zip(points, points[1:], strict=False):
            dx, dy = cx - ax, cy - ay
            length = math.hypot(dx, dy)
            if length <= piece:
                current.append((cx, cy))
                run += length
                if run >= piece:
                    close(current)
                    current, run = [(cx, cy)], 0.0
                continue
            if len(current) > 1:
                close(current)
            straight = min(abs(dx), abs(dy)) <= THIN
            count = max(1, math.ceil(length / max(piece, STRAIGHT_PIECE if straight else piece)))
            box = (min(ax, cx), min(ay, cy), max(ax, cx), max(ay, cy))
            runs.append((*box, ((ax, ay), (cx, cy)), count))
            current, run = [(cx, cy)], 0.0
        if len(current) > 1:
            close(current)
    return runs
