"""Graphics items of the program graph: op and scope nodes, value edges, spec badges."""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from shardscope.backend.program.layout import ScopeBox
from shardscope.backend.program.placement import NODE_H, NODE_W, Edge, Node
from shardscope.backend.sharding.spec import axes_text
from shardscope.viewers.common.colors import Theme, axis_color, text_color_on
from shardscope.viewers.common.elide import elide_middle
from shardscope.viewers.graph.spatial import RectIndex


@dataclass
class GraphStyle:
    """Colours and fonts shared by the items of one view (rebuilt on a theme change)."""

    theme: Theme
    font: QFont
    small: QFont

    @property
    def dark(self) -> bool:
        return self.theme.is_dark

    def node_fill(self, kind: str) -> QColor:
        if kind == "scope":
            return QColor("#2F3B4C") if self.dark else QColor("#E3ECF7")
        if kind in ("input", "output"):
            return QColor("#2B3A2F") if self.dark else QColor("#E6F2E8")
        return QColor("#2A2A2E") if self.dark else QColor("#F7F7F7")

    def node_border(self, kind: str) -> QColor:
        if kind == "scope":
            return QColor("#6D8CB3") if self.dark else QColor("#5A7FAE")
        if kind in ("input", "output"):
            return QColor("#6FA27A") if self.dark else QColor("#5E9469")
        return QColor("#707074") if self.dark else QColor("#8A8A8A")

    @property
    def edge(self) -> QColor:
        return QColor("#8A8F98") if self.dark else QColor("#7A7F88")

    @property
    def box_fill(self) -> QColor:
        return QColor(120, 150, 200, 40) if self.dark else QColor(70, 110, 170, 30)

    @property
    def box_border(self) -> QColor:
        return QColor(120, 150, 200, 110) if self.dark else QColor(70, 110, 170, 90)


class NodeItem(QGraphicsItem):
    """One visible node: an op, a folded scope (with its op count), an input or the return."""

    def __init__(self, index: int, node: Node, style: GraphStyle) -> None:
        super().__init__()
        self.index = index
        self.node = node
        self.style = style
        self.highlight = False
        self.setPos(node.x, node.y)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setZValue(2)
        tip = [node.label, node.detail]
        if node.scope:
            tip.append(f"scope {node.scope}")
        if node.kind == "scope":
            tip.append("double-click to expand")
        elif node.enterable:
            tip.append("double-click to enter")
        self.setToolTip("\n".join(t for t in tip if t))

    def boundingRect(self) -> QRectF:
        extra = 6.0 if self.node.kind == "scope" else 0.0
        return QRectF(-NODE_W / 2 - 3, -NODE_H / 2 - 3, NODE_W + 6 + extra, NODE_H + 6 + extra)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        st = self.style
        kind = self.node.kind
        rect = QRectF(-NODE_W / 2, -NODE_H / 2, NODE_W, NODE_H)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        border = st.node_border(kind)
        selected = self.isSelected() or self.highlight
        pen = QPen(st.theme.selected if selected else border, 2.5 if selected else 1.2)
        radius = NODE_H / 2 if kind in ("input", "output") else 6.0
        if kind == "scope":
            # A second card behind the first: this node stands for many ops.
            painter.setPen(QPen(border, 1.0))
            back = st.node_fill(kind).darker(115)
            painter.setBrush(QBrush(back))
            painter.drawRoundedRect(rect.translated(5, 5), radius, radius)
        painter.setPen(pen)
        painter.setBrush(QBrush(st.node_fill(kind)))
        painter.drawRoundedRect(rect, radius, radius)
        fg = st.theme.foreground
        painter.setPen(fg)
        label = self.node.label
        if kind == "scope":
            label = f"▸ {label}"
        elif self.node.enterable:
            label = f"{label}  ⤵"
        fm = QFontMetricsF(st.font)
        # The title's descenders (an underscore) must end above the detail line's capitals.
        text_rect = rect.adjusted(10, 2, -10, -NODE_H / 2 - 1)
        painter.setFont(st.font)
        # Both ends stay: the root and the most specific keys (params…[3]['w_in']).
        painter.drawText(
            text_rect,
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom,
            elide_middle(label, fm, text_rect.width()),
        )
        if self.node.detail:
            painter.setFont(st.small)
            painter.setPen(st.theme.muted)
            sm = QFontMetricsF(st.small)
            detail_rect = rect.adjusted(10, NODE_H / 2 + 2, -10, -2)
            painter.drawText(
                detail_rect,
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
                sm.elidedText(self.node.detail, Qt.TextElideMode.ElideRight, detail_rect.width()),
            )

    # No itemChange override: Qt repaints a selected item itself (its cache too), and a
    # Python override is called for every change of every node (ten per node as a large
    # drawing is made).


class EdgeItem(QGraphicsPathItem):
    """Values flowing between two nodes: a routed polyline, or a faint curve for long edges."""

    def __init__(self, edge: Edge, style: GraphStyle) -> None:
        super().__init__()
        self.edge = edge
        self.style = style
        self.setZValue(0)
        self.setPath(self._path())
        self.apply_style()

    def apply_style(self) -> None:
        color = QColor(self.style.edge)
        if self.edge.long:
            color.setAlpha(70)
        pen = QPen(color, 1.0 if self.edge.long else 1.4)
        pen.setCosmetic(True)
        self.setPen(pen)

    def _path(self) -> QPainterPath:
        pts = [QPointF(x, y) for x, y in self.edge.points]
        path = QPainterPath(pts[0])
        if len(pts) == 2:
            a, b = pts
            # An edge back up the drawing (a cycle that folding scopes made) bends only a
            # little beyond its ends, not by a third of its length.
            dy = max(40.0, (b.y() - a.y()) / 3) if b.y() > a.y() else 80.0
            path.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b)
        else:
            for p in pts[1:]:
                path.lineTo(p)
        # Arrowhead at the consumer.
        end = pts[-1]
        path.moveTo(end)
        path.lineTo(end + QPointF(-4, -7))
        path.moveTo(end)
        path.lineTo(end + QPointF(4, -7))
        return path

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(8)
        return stroker.createStroke(self.path())

    def boundingRect(self) -> QRectF:
        # Qt bounds a path item by its stroke's control points, which for a long curve
        # reach far beyond the curve itself and would stretch the scene.
        return self.path().boundingRect().adjusted(-5, -5, 5, 5)


class BadgeItem(QGraphicsItem):
    """A value's current sharding: one chip per dimension, coloured by mesh axis.

    Chips are drop targets (the view maps a drop position to ``dim_at``).
    """

    PAD = 4.0
    GAP = 3.0
    AXIS_GAP = 1.0  # between the axis chips of one dimension
    H = 20.0

    def __init__(self, value_ids: tuple[int, ...], style: GraphStyle) -> None:
        super().__init__()
        self.value_ids = value_ids
        self.style = style
        self.axes_names: tuple[str, ...] = ()
        self.dims: list[tuple[str, ...]] = []
        self.text = ""
        self.origin = "none"
        self.hover_dim: int | None = None
        self._chips: list[QRectF] = []
        self._rect = QRectF()
        self.setZValue(3)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)

    @property
    def value_id(self) -> int | None:
        """The one value this badge edits, or None when it stands for several."""
        return self.value_ids[0] if len(self.value_ids) == 1 else None

    def set_spec(self, dims, origin: str, mesh_axes: tuple[str, ...], tooltip: str) -> None:
        """Show ``dims`` (a list of axis tuples per dim, or None if unknown)."""
        self.prepareGeometryChange()
        self.axes_names = mesh_axes
        self.origin = origin
        self.dims = list(dims) if dims is not None else []
        fm = QFontMetricsF(self.style.small)
        chips: list[QRectF] = []
        if self.value_id is None:
            self.text = f"{len(self.value_ids)} tensors"
            w = fm.horizontalAdvance(self.text) + 2 * self.PAD
            chips = []
            total = w
        elif dims is None:
            self.text = "?"
            total = fm.horizontalAdvance("[ ? ]") + 2 * self.PAD
        elif not self.dims:
            self.text = "scalar"
            total = fm.horizontalAdvance("scalar") + 2 * self.PAD
        else:
            x = self.PAD + fm.horizontalAdvance("[")
            for d in self.dims:
                w = sum(self._axis_widths(fm, d)) + self.AXIS_GAP * max(len(d) - 1, 0)
                chips.append(QRectF(x, 3, w, self.H - 6))
                x += w + self.GAP
            total = x - self.GAP + fm.horizontalAdvance("]") + self.PAD
        self._chips = chips
        self._rect = QRectF(-total / 2, -self.H / 2, total, self.H)
        self.setToolTip(tooltip)
        self.update()

    @staticmethod
    def _axis_widths(fm: QFontMetricsF, dim: tuple[str, ...]) -> list[float]:
        """The width of each axis chip of one dimension (one ``_`` chip if it has none)."""
        return [max(fm.horizontalAdvance(a) + 8, 16) for a in (dim or ("_",))]

    def axis_chips(self, dim: int) -> list[tuple[str, QRectF]]:
        """Dimension ``dim``'s chips, one per axis in order (``_`` if it has none), each
        with its rect in the badge's coordinates."""
        chip = self._chips[dim]
        d = self.dims[dim]
        x = chip.left() + self._rect.left()
        out = []
        widths = self._axis_widths(QFontMetricsF(self.style.small), d)
        for axis, w in zip(d or ("_",), widths, strict=True):
            out.append((axis, QRectF(x, chip.top() + self._rect.top(), w, chip.height())))
            x += w + self.AXIS_GAP
        return out

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-2, -2, 2, 2)

    def dim_at(self, scene_pos: QPointF) -> int | None:
        """The dimension chip under ``scene_pos`` (nearest chip inside the badge)."""
        if self.value_id is None or not self._chips:
            return None
        p = self.mapFromScene(scene_pos) - self._rect.topLeft()
        if (
            not QRectF(0, 0, self._rect.width(), self._rect.height())
            .adjusted(-4, -6, 4, 6)
            .contains(p)
        ):
            return None
        best = min(range(len(self._chips)), key=lambda i: abs(self._chips[i].center().x() - p.x()))
        return best

    def chip_scene_center(self, dim: int) -> QPointF:
        """Where dim ``dim``'s chip is (for tests and drop previews)."""
        return self.mapToScene(self._chips[dim].center() + self._rect.topLeft())

    def paint(self, painter: QPainter, option, widget=None) -> None:
        st = self.style
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        bg = QColor("#232326") if st.dark else QColor("#FFFFFF")
        border = st.theme.selected if self.isSelected() else st.theme.grid
        pen = QPen(border, 1.5 if self.isSelected() else 1.0)
        if self.origin == "user":
            pen.setWidthF(1.8)
            pen.setColor(st.theme.foreground if not self.isSelected() else st.theme.selected)
        elif self.origin == "code":
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(bg)
        painter.drawRoundedRect(self._rect, 5, 5)
        painter.setFont(st.small)
        if not self._chips:
            painter.setPen(st.theme.muted)
            painter.drawText(self._rect, Qt.AlignmentFlag.AlignCenter, self.text)
            return
        origin = self._rect.topLeft()
        painter.setPen(st.theme.muted)
        painter.drawText(
            QRectF(origin.x() + self.PAD - 1, origin.y(), 10, self.H),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            "[",
        )
        painter.drawText(
            QRectF(self._rect.right() - self.PAD - 8, origin.y(), 9, self.H),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            "]",
        )
        for i, (chip, d) in enumerate(zip(self._chips, self.dims, strict=False)):
            for axis, r in self.axis_chips(i):
                self._paint_axis_chip(painter, r, axis if d else None)
            if self.hover_dim == i:
                painter.setPen(QPen(st.theme.highlight, 2.0))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRoundedRect(chip.translated(origin).adjusted(-2, -2, 2, 2), 4, 4)

    def _paint_axis_chip(self, painter: QPainter, r: QRectF, axis: str | None) -> None:
        """One axis chip in its axis's colour; ``None``: the outlined ``_`` of a
        replicated dimension."""
        st = self.style
        if axis is not None:
            color = axis_color(self.axes_names, axis)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawRoundedRect(r, 3, 3)
            painter.setPen(text_color_on(color))
            painter.drawText(r, Qt.AlignmentFlag.AlignCenter, axis)
            return
        painter.setPen(QPen(st.theme.grid, 1.0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(r, 3, 3)
        painter.setPen(st.theme.muted)
        # "_" sits on the baseline; lift it so a replicated dim does not look empty.
        painter.drawText(r.translated(0, -3), Qt.AlignmentFlag.AlignCenter, axes_text(()))


class ScopeBoxItem(QGraphicsItem):
    """The region of an expanded scope, with its name on each separate piece of it;
    double-click a name to fold the scope."""

    HEADER = 18.0
    # Padding around each node card: rows are 72 px apart and columns 32 px, so a row's
    # padding meets the next row's while columns stay apart; outer scopes add STEP per
    # level of nesting, so a region encloses the regions of the scopes inside it.
    PAD_X = 14.0
    PAD_Y = 37.0
    STEP = 5.0

    @classmethod
    def around(
        cls,
        box: ScopeBox,
        nodes: list[Node],
        outer_levels: int,
        style: GraphStyle,
        avoid: RectIndex | None = None,
        taken: RectIndex | None = None,
        rows: dict[float, list[float]] | None = None,
    ) -> ScopeBoxItem:
        """The region of ``box``: the union of its ``nodes``' padded cards, each row's
        cards joined from the first to the last unless a node of another scope stands
        between (``rows``: ``row_centres`` of the whole layout; without it, joined). The
        layered layout interleaves scopes (a parameter sits beside the op that reads it),
        so a rectangle would take in other scopes' nodes; the union never does. ``taken``:
        the names of the scopes placed before, which its names keep clear of (and join)."""
        pad_x = cls.PAD_X + cls.STEP * outer_levels
        pad_y = cls.PAD_Y + cls.STEP * outer_levels
        # The union of plain rectangles, its corners rounded afterwards: Qt merges curved
        # outlines far more slowly, and a fully unfolded model has thousands of cards.
        path = QPainterPath()
        path.setFillRule(Qt.FillRule.WindingFill)
        for left, right, top, bottom in _span_runs(nodes, rows or {}, NODE_H + 2 * pad_y):
            card = QRectF(
                left - NODE_W / 2, top - NODE_H / 2, right - left + NODE_W, bottom - top + NODE_H
            )
            path.addRect(card.adjusted(-pad_x, -pad_y, pad_x, pad_y))
        for left, right, top, bottom in _row_bridges(nodes, rows or {}):
            path.addRect(QRectF(left - pad_x, top, right - left + 2 * pad_x, bottom - top))
        pieces = path.simplified().toSubpathPolygons()
        return cls(box, _rounded(pieces, cls.RADIUS), style, avoid, pieces, taken)

    RADIUS = 10.0

    def __init__(
        self,
        box: ScopeBox,
        outline: QPainterPath,
        style: GraphStyle,
        avoid: RectIndex | None = None,
        pieces: list[QPolygonF] | None = None,
        taken: RectIndex | None = None,
    ) -> None:
        """``pieces``: the outline's separate parts as polygons with sharp corners (where
        the names go); by default, the outline's own."""
        super().__init__()
        self.box = box
        self.style = style
        self._outline = outline
        self._bounds = outline.boundingRect()
        self.setZValue(-1 - box.depth * 0.01)
        self.setToolTip(f"scope {box.path}\ndouble-click the name to fold")
        width = QFontMetricsF(style.small).horizontalAdvance(f"▾ {box.label}") + 16
        # One name per piece, inside its top edge at the left end, or at another corner
        # when a badge (``avoid``) covers that spot.
        self._headers = []
        # clear of the rounded corners
        inset = 4 + (self.RADIUS if pieces is not None else 0.0)
        for polygon in pieces if pieces is not None else outline.toSubpathPolygons():
            points = [(p.x(), p.y()) for p in polygon]
            top = min(y for _, y in points)
            bottom = max(y for _, y in points)
            top_xs = [x for x, y in points if y <= top + 0.5]
            bottom_xs = [x for x, y in points if y >= bottom - 0.5]
            spots = [
                QRectF(min(top_xs) + inset, top + 2, width, self.HEADER),
                QRectF(max(top_xs) - inset - width, top + 2, width, self.HEADER),
                QRectF(min(bottom_xs) + inset, bottom - 2 - self.HEADER, width, self.HEADER),
                QRectF(
                    max(bottom_xs) - inset - width, bottom - 2 - self.HEADER, width, self.HEADER
                ),
            ]
            # a nested scope whose first row is its parent's: a row lower, clear of the
            # parent's name
            spots += [spots[0].translated(0, k * (self.HEADER + 2)) for k in (1, 2)]
            if (avoid is None or not len(avoid)) and (taken is None or not len(taken)):
                self._headers.append(spots[0])
                continue

            def cost(r: QRectF) -> tuple[bool, float]:
                rect = (r.x(), r.y(), r.width(), r.height())
                named = taken is not None and len(taken) and taken.covered(rect) > 0
                return bool(named), avoid.covered(rect) if avoid is not None else 0.0

            self._headers.append(min(spots, key=cost))
        if taken is not None:
            for r in self._headers:
                taken.add((r.x(), r.y(), r.width(), r.height()))

    def boundingRect(self) -> QRectF:
        rect = QRectF(self._bounds)
        for header in self._headers:
            rect = rect.united(header)
        return rect.adjusted(-1, -1, 1, 1)

    def header_rect(self) -> QRectF:
        """The name on the topmost piece."""
        return QRectF(min(self._headers, key=lambda r: (r.top(), r.left())))

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        for header in self._headers:
            path.addRect(header)
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        st = self.style
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        # the region is outlined, not filled: unfolding a scope then changes its nodes,
        # edges and outline, not every pixel it covers (each one crosses a forwarded
        # display); its name strips carry the tint
        painter.save()
        painter.setClipPath(self._outline)
        for header in self._headers:
            painter.fillRect(header, st.box_fill)
        painter.restore()
        painter.setPen(QPen(st.box_border, 1.0, Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._outline)
        painter.setFont(st.small)
        painter.setPen(st.theme.muted)
        for header in self._headers:
            painter.drawText(
                header.adjusted(6, 0, 0, 0),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                f"▾ {self.box.label}",
            )


def _rounded(polygons: list[QPolygonF], radius: float) -> QPainterPath:
    """Closed outlines through ``polygons`` with each corner rounded by up to ``radius``
    (less where an edge is too short for it)."""
    path = QPainterPath()
    for polygon in polygons:
        pts = [(p.x(), p.y()) for p in polygon]
        if len(pts) > 1 and pts[0] == pts[-1]:
            pts.pop()
        if len(pts) < 3:
            continue
        n = len(pts)
        for i in range(n):
            (ax, ay), (vx, vy), (bx, by) = pts[i - 1], pts[i], pts[(i + 1) % n]
            da = math.hypot(ax - vx, ay - vy) or 1.0
            db = math.hypot(bx - vx, by - vy) or 1.0
            ra, rb = min(radius, da / 2) / da, min(radius, db / 2) / db
            start = QPointF(vx + (ax - vx) * ra, vy + (ay - vy) * ra)
            end = QPointF(vx + (bx - vx) * rb, vy + (by - vy) * rb)
            if i == 0:
                path.moveTo(start)
            else:
                path.lineTo(start)
            path.quadTo(QPointF(vx, vy), end)
        path.closeSubpath()
    return path


def row_centres(nodes: list[Node]) -> dict[float, list[float]]:
    """The centres of every node of a layout by row (y), left to right."""
    rows: dict[float, list[float]] = {}
    for n in nodes:
        rows.setdefault(n.y, []).append(n.x)
    for xs in rows.values():
        xs.sort()
    return rows


def _row_spans(
    nodes: list[Node], every: dict[float, list[float]]
) -> list[tuple[float, float, float]]:
    """The scope's nodes of each row as ``(left centre, right centre, y)`` spans: one span
    from its first node to its last, split only where another node of the row (``every``:
    ``row_centres`` of the whole layout) stands between two of them. A scope whose nodes
    share a row is then one region and not a frame around each column of it."""
    rows: dict[float, list[float]] = {}
    for n in nodes:
        rows.setdefault(n.y, []).append(n.x)
    spans = []
    for y, xs in rows.items():
        xs.sort()
        between = every.get(y, [])
        left = xs[0]
        for a, b in itertools.pairwise(xs):
            k = bisect.bisect_right(between, a)
            if k < len(between) and between[k] < b:
                spans.append((left, a, y))
                left = b
        spans.append((left, xs[-1], y))
    return spans


def _row_bridges(
    nodes: list[Node], every: dict[float, list[float]]
) -> list[tuple[float, float, float, float]]:
    """Where the scope's spans of two neighbouring rows (``_row_spans``; no row of
    ``every`` between them) do not overlap: a band across the gap between the rows' cards,
    from the nearer end of one span to that of the other, as ``(left, right, top,
    bottom)``. The gap between two rows holds no card, so the band takes in no node of
    another scope, and joins the pieces of the scope into one region."""
    by_row: dict[float, list[tuple[float, float]]] = {}
    for left, right, y in _row_spans(nodes, every):
        by_row.setdefault(y, []).append((left - NODE_W / 2, right + NODE_W / 2))
    order = sorted(every)
    bridges = []
    for y1, y2 in itertools.pairwise(sorted(by_row)):
        if bisect.bisect_left(order, y2) != bisect.bisect_left(order, y1) + 1:
            continue  # a row of other nodes between them
        upper, lower = by_row[y1], by_row[y2]
        if any(a < d and c < b for a, b in upper for c, d in lower):
            continue  # they overlap: their padded cards meet
        _, left, right = min(
            (max(c - b, a - d), min(b, d), max(a, c)) for a, b in upper for c, d in lower
        )
        bridges.append((left, right, y1 + NODE_H / 2, y2 - NODE_H / 2))
    return bridges


def _span_runs(
    nodes: list[Node], every: dict[float, list[float]], reach: float
) -> list[tuple[float, float, float, float]]:
    """The row spans (``_row_spans``) of equal extent whose padded cards overlap (centres
    less than ``reach`` apart), as ``(left, right, top centre, bottom centre)`` runs: one
    rectangle per run instead of one per node keeps the union of a large scope cheap to
    simplify."""
    columns: dict[tuple[float, float], list[float]] = {}
    for left, right, y in _row_spans(nodes, every):
        columns.setdefault((left, right), []).append(y)
    runs = []
    for (left, right), ys in columns.items():
        ys.sort()
        top = bottom = ys[0]
        for y in ys[1:]:
            if y - bottom < reach:
                bottom = y
                continue
            runs.append((left, right, top, bottom))
            top = bottom = y
        runs.append((left, right, top, bottom))
    return runs


def spread_badges(badges: list[BadgeItem], gap: float = 6.0) -> None:
    """Move badges of one row apart where they overlap (two edges converging on one op
    put their badges side by side), keeping each cluster centred where it was."""
    rows: dict[int, list] = {}
    for badge in badges:
        rows.setdefault(round(badge.y()), []).append(badge)
    for row in rows.values():
        row.sort(key=lambda b: b.x())
        cluster = [row[0]]
        wanted = [row[0].x()]
        for badge in row[1:]:
            prev = cluster[-1]
            left = prev.x() + prev.boundingRect().right() + gap - badge.boundingRect().left()
            if badge.x() < left:
                cluster.append(badge)
                wanted.append(badge.x())
                badge.setX(left)
                continue
            _recentre(cluster, wanted)
            cluster, wanted = [badge], [badge.x()]
        _recentre(cluster, wanted)


def _recentre(cluster: list[BadgeItem], wanted: list[float]) -> None:
    if len(cluster) < 2:
        return
    shift = sum(wanted) / len(wanted) - sum(b.x() for b in cluster) / len(cluster)
    for badge in cluster:
        badge.setX(badge.x() + shift)
