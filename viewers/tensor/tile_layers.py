"""What the tile plot draws, bottom to top: the tile image, grid lines, the padding band,
the tensor's real edge, tile labels, the highlight and the hover outline.

``TileLayers`` owns these items on one pyqtgraph plot and redraws them from a grid's
geometry; the tile grid widget decides what to show, this module how it looks.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPen,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from shardscope.viewers.common.colors import LUT_SIZE, Theme

# A tile cell (element coordinates), its text and the text's colour.
Cell = tuple[QRectF, str, QColor]


# Below this, labels are not drawn: the hover text names the tile's devices instead.
MIN_LABEL_POINTS = 6.0


class TileLabelsItem(QGraphicsItem):
    """Device labels for every displayed tile, in screen space, smaller only where they
    would not fit."""

    def __init__(self) -> None:
        super().__init__()
        self._rect = QRectF()
        self._cells: list[Cell] = []
        self._notes: list[Cell] = []
        self.font = QFont()
        self.font.setPointSizeF(9)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresParentOpacity)

    def set_cells(self, rect: QRectF, cells: list[Cell], notes: list[Cell]) -> None:
        self.prepareGeometryChange()
        self._rect = QRectF(rect)
        self._cells = cells
        self._notes = notes
        self.update()

    @property
    def texts(self) -> list[str]:
        """The labels' texts, the tiles' and the notes'."""
        return [text for _, text, _ in self._cells + self._notes]

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self._cells and not self._notes:
            return
        placed = self.placed(painter.transform())
        painter.save()
        painter.resetTransform()
        current = None
        for screen, text, color, size in placed:
            if size != current:
                font = QFont(self.font)
                font.setPointSizeF(size)
                painter.setFont(font)
                current = size
            painter.setPen(color)
            painter.drawText(screen, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def placed(self, transform: QTransform) -> list[tuple[QRectF, str, QColor, float]]:
        """The labels drawn under ``transform`` (element to screen): screen rect, text,
        colour and point size; those that would be unreadably small are left out."""
        fm = QFontMetrics(self.font)
        out = []
        sizes = [self._fit(transform.mapRect(rect), text, fm) for rect, text, _ in self._cells]
        # One size for all device labels, the largest at which every label that can be
        # read at all fits its tile: three-digit ids then shrink with their neighbours
        # instead of vanishing.
        common = min((size for size in sizes if size >= MIN_LABEL_POINTS), default=0.0)
        for (rect, text, color), size in zip(self._cells, sizes, strict=True):
            if size >= MIN_LABEL_POINTS:
                out.append((transform.mapRect(rect), text, color, common))
        for rect, text, color in self._notes:
            screen = transform.mapRect(rect)
            size = self._fit(screen, text, fm)
            if size >= MIN_LABEL_POINTS:
                out.append((screen, text, color, size))
        return out

    def _fit(self, screen: QRectF, text: str, fm: QFontMetrics) -> float:
        """The largest point size, up to the label font's, at which ``text`` fits ``screen``."""
        lines = text.split("\n")
        need_w = max(fm.horizontalAdvance(s) for s in lines) + 4
        need_h = fm.height() * len(lines)
        scale = min(1.0, screen.width() / need_w, screen.height() / need_h)
        return self.font.pointSizeF() * scale


class TileLayers:
    """The items of one tile plot; see the module docstring.

    Grid geometry is ``(rows, cols, row tile length, col tile length, row size, col
    size)`` in tensor elements: tiles past the real size are padding.
    """

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setAutoDownsample(False)
        plot.addItem(self.image)
        self.lines = QGraphicsPathItem()
        self.lines.setZValue(5)
        plot.addItem(self.lines)
        self.padding = QGraphicsPathItem()
        self.padding.setZValue(6)
        plot.addItem(self.padding)
        self.hatch = QGraphicsPathItem()
        self.hatch.setZValue(6.5)
        self.hatch.setPen(QPen(Qt.PenStyle.NoPen))
        plot.addItem(self.hatch)
        self.edge = QGraphicsPathItem()
        self.edge.setZValue(7)
        plot.addItem(self.edge)
        self.highlight = QGraphicsPathItem()
        self.highlight.setZValue(9)
        plot.addItem(self.highlight)
        self.hover = QGraphicsPathItem()
        self.hover.setZValue(10)
        plot.addItem(self.hover)
        self.labels = TileLabelsItem()
        self.labels.setZValue(8)
        plot.addItem(self.labels)

    def draw(
        self,
        geometry: tuple[int, int, float, float, int, int],
        image: np.ndarray,
        lut: np.ndarray,
        labels: list[Cell],
        theme: Theme,
    ) -> QRectF:
        """Draw ``image`` (one pixel per tile, indexing ``lut``) over the grid; returns the
        grid's rect. Tiles wholly in the padding say "empty" instead of their label."""
        rows, cols, tr, tc, nr, nc = geometry
        self.image.setImage(image, autoLevels=False, levels=(0, LUT_SIZE - 1), lut=lut)
        full = QRectF(0, 0, cols * tc, rows * tr)
        self.image.setRect(full)

        self._draw_lines(rows, cols, tr, tc, theme)
        self._draw_padding(rows, cols, tr, tc, nr, nc, theme)
        # A row or column that starts past the real size holds only padding.
        empty_rows = [i for i in range(rows) if i * tr >= nr]
        empty_cols = [j for j in range(cols) if j * tc >= nc]
        notes: list[Cell] = []
        for i in range(rows):
            for j in range(cols):
                if i in empty_rows or j in empty_cols:
                    notes.append((QRectF(j * tc, i * tr, tc, tr), "empty", theme.foreground))
        if notes:
            labels = [c for c in labels if not any(c[0] == n[0] for n in notes)]
        self.labels.set_cells(full, labels, notes)
        return full

    def _draw_lines(self, rows: int, cols: int, tr: float, tc: float, theme: Theme) -> None:
        """The lines between tiles, in the background colour."""
        lines = QPainterPath()
        for j in range(1, cols):
            lines.moveTo(j * tc, 0)
            lines.lineTo(j * tc, rows * tr)
        for i in range(1, rows):
            lines.moveTo(0, i * tr)
            lines.lineTo(cols * tc, i * tr)
        pen = QPen(theme.background, 1.5)
        pen.setCosmetic(True)
        self.lines.setPen(pen)
        self.lines.setPath(lines)

    def _draw_padding(
        self, rows: int, cols: int, tr: float, tc: float, nr: int, nc: int, theme: Theme
    ) -> None:
        """Shade and hatch the tiles' padding past the real size ``nr`` x ``nc``, with a
        dashed edge where the real size ends."""
        pad = QPainterPath()
        edge = QPainterPath()
        if cols * tc > nc:
            pad.addRect(QRectF(nc, 0, cols * tc - nc, rows * tr))
            edge.moveTo(nc, 0)
            edge.lineTo(nc, rows * tr)
        if rows * tr > nr:
            pad.addRect(QRectF(0, nr, min(nc, cols * tc), rows * tr - nr))
            edge.moveTo(0, nr)
            edge.lineTo(cols * tc, nr)
        self.padding.setPath(pad)
        pad_color = QColor(theme.padding)
        pad_color.setAlpha(170)
        self.padding.setBrush(QBrush(pad_color))
        self.padding.setPen(QPen(Qt.PenStyle.NoPen))
        hatch = QColor(theme.foreground)
        hatch.setAlpha(120)
        self.hatch.setBrush(QBrush(hatch, Qt.BrushStyle.BDiagPattern))
        self.hatch.setPath(pad)
        edge_pen = QPen(theme.foreground, 2, Qt.PenStyle.DashLine)
        edge_pen.setCosmetic(True)
        self.edge.setPen(edge_pen)
        self.edge.setPath(edge)
        self.edge.setBrush(Qt.BrushStyle.NoBrush)

    def show_highlight(self, rects: list[QRectF], theme: Theme) -> None:
        """Outline ``rects`` (the highlighted tiles) in the theme's highlight colour."""
        path = QPainterPath()
        for rect in rects:
            path.addRect(rect)
        pen = QPen(theme.highlight, 3)
        pen.setCosmetic(True)
        self.highlight.setPen(pen)
        self.highlight.setPath(path)

    def show_hover(self, rect: QRectF, theme: Theme) -> None:
        """Outline the hovered tile ``rect``."""
        path = QPainterPath()
        path.addRect(rect)
        pen = QPen(theme.foreground, 2.5)
        pen.setCosmetic(True)
        self.hover.setPen(pen)
        self.hover.setPath(path)

    def clear_hover(self) -> None:
        """Remove the hover outline."""
        self.hover.setPath(QPainterPath())

    def clear(self) -> None:
        """Draw nothing."""
        self.image.clear()
        for item in (
            self.lines,
            self.padding,
            self.hatch,
            self.edge,
            self.highlight,
            self.hover,
        ):
            item.setPath(QPainterPath())
        self.labels.set_cells(QRectF(), [], [])
