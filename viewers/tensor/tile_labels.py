"""Tile grid helpers: the device colour table, tile labels and the label overlay item."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QGraphicsItem

from shardscope.viewers.common.colors import device_lut

LUT_SIZE = 256
MAX_LABELLED_TILES = 4096


def lut_for(n_devices: int) -> np.ndarray:
    """A 256-entry colour table: the device colours, repeated past the device count."""
    base = device_lut(min(max(n_devices, 1), LUT_SIZE))
    reps = -(-LUT_SIZE // len(base))
    return np.ascontiguousarray(np.tile(base, (reps, 1))[:LUT_SIZE])


def tile_label(devices: tuple[int, ...]) -> str:
    """Short label of the devices holding a tile: ``5``, ``0,4,8,12``, ``0-7`` for a run of
    consecutive ids, or ``0,2,…(8)`` when the list is long."""
    devs = list(devices)
    if len(devs) <= 4:
        return ",".join(map(str, devs))
    if devs == list(range(devs[0], devs[0] + len(devs))):
        return f"{devs[0]}-{devs[-1]}"
    return f"{devs[0]},{devs[1]},\u2026({len(devs)})"


def describe_devices(devices: tuple[int, ...] | list[int], limit: int = 16) -> str:
    """``devices 0, 4`` (long lists shortened with a count)."""
    devs = list(devices)
    if not devs:
        return "no device"
    head = ", ".join(str(d) for d in devs[:limit])
    more = f" \u2026 (+{len(devs) - limit})" if len(devs) > limit else ""
    word = "device" if len(devs) == 1 else f"{len(devs)} devices"
    return f"{word} {head}{more}"


class TileLabelsItem(QGraphicsItem):
    """Device labels for every displayed tile, drawn at a fixed font size in screen space."""

    def __init__(self) -> None:
        super().__init__()
        self._rect = QRectF()
        self._cells: list[tuple[QRectF, str, QColor]] = []
        self._notes: list[tuple[QRectF, str, QColor]] = []
        self.font = QFont()
        self.font.setPointSizeF(9)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresParentOpacity)

    def set_cells(
        self,
        rect: QRectF,
        cells: list[tuple[QRectF, str, QColor]],
        notes: list[tuple[QRectF, str, QColor]],
    ) -> None:
        self.prepareGeometryChange()
        self._rect = QRectF(rect)
        self._cells = cells
        self._notes = notes
        self.update()

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self._cells and not self._notes:
            return
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setFont(self.font)
        fm = QFontMetrics(self.font)
        for rect, text, color in self._cells + self._notes:
            screen = transform.mapRect(rect)
            lines = text.split("\n")
            need_w = max(fm.horizontalAdvance(s) for s in lines) + 4
            need_h = fm.height() * len(lines)
            if screen.width() < need_w or screen.height() < need_h:
                continue
            painter.setPen(color)
            painter.drawText(screen, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
