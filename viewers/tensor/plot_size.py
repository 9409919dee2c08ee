"""How large the tile plot draws a tensor: by the tensor's aspect, no taller or wider than
a cap, and large enough that every tile's label fits (wider than the cap where the room
allows, so that a grid of many columns keeps its labels).

``tiles_area(room, aspect, grid, label)`` answers in pixels of the plot's data area
(inside its axes), ``plot_margins(plot)`` what the plot takes around that area; the tile
grid widget sizes its plot by them, in a ``PlotBox``.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QWidget

# the data area is at most this many pixels tall and wide (the axes come on top of it)
MAX_HEIGHT = 128
MAX_WIDTH = 2 * MAX_HEIGHT
# and never flatter or narrower than this (a 8 x 65536 tensor is drawn 1 : 6)
MAX_ASPECT = 6.0
# the smallest data area drawn, whatever the tensor
MIN_SIDE = 48
# around a tile's label: its width and height plus this many pixels
LABEL_MARGIN = 4


def tiles_area(
    room: tuple[int, int],
    aspect: float,
    grid: tuple[int, int],
    label: tuple[int, int] | None,
    caps: tuple[int, int] = (MAX_WIDTH, MAX_HEIGHT),
) -> tuple[int, int]:
    """(width, height) of the data area in pixels.

    ``room``: the widest and tallest the area may be; ``aspect``: the tensor's height over
    its width, in elements, as drawn; ``grid``: (rows, cols) of tiles drawn; ``label``:
    (width, height) of the widest tile label, or None where labels are not drawn;
    ``caps``: the widest and tallest the tensor's aspect alone makes it.
    """
    width_room = max(1, min(room[0], caps[0]))
    height_room = max(1, min(room[1], caps[1]))
    aspect = min(max(aspect, 1.0 / MAX_ASPECT), MAX_ASPECT) if aspect > 0 else 1.0
    width = float(width_room)
    height = width * aspect
    if height > height_room:
        height = float(height_room)
        width = height / aspect
    least_w, least_h = MIN_SIDE, MIN_SIDE
    if label is not None:
        rows, cols = grid
        least_w = max(least_w, cols * (label[0] + LABEL_MARGIN))
        least_h = max(least_h, rows * (label[1] + LABEL_MARGIN))
    # labels may widen it past the cap, as far as the room goes
    width = max(width, min(least_w, max(1, room[0])))
    height = max(height, min(least_h, height_room))
    return math.ceil(width), math.ceil(height)


class PlotBox(QWidget):
    """The plot's place: as wide as the dock, one height for every tensor, the plot in
    its top left corner."""

    def __init__(self, plot: QWidget, height: int) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(plot, 0, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setFixedHeight(height)
        self.setMinimumWidth(160)


def plot_margins(plot: pg.PlotWidget) -> tuple[int, int]:
    """(width, height) ``plot`` takes beyond its data area: axes and margins."""
    item = plot.getPlotItem()
    item.resize(400, 300)
    item.layout.activate()
    box = item.getViewBox().geometry()
    return 400 - math.floor(box.width()), 300 - math.floor(box.height())
