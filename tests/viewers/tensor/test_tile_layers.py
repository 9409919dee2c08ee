"""The tile plot's layers: image, padding band and edge, labels and "empty" notes, outlines."""

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from shardscope.viewers.common.colors import LUT_SIZE, THEMES, lut_for
from shardscope.viewers.tensor.tile_layers import TileLayers

THEME = THEMES["light"]


def make(qtbot):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    # The items die with their plot: the caller keeps both.
    return plot, TileLayers(plot)


def labels_for(rows, cols, tr, tc):
    black = QColor("#000000")
    return [
        (QRectF(j * tc, i * tr, tc, tr), f"{i},{j}", black)
        for i in range(rows)
        for j in range(cols)
    ]


def test_even_grid_has_no_padding(qtbot):
    _plot, layers = make(qtbot)
    image = np.arange(4, dtype=np.uint8).reshape(2, 2)
    full = layers.draw((2, 2, 4.0, 4.0, 8, 8), image, lut_for(4), labels_for(2, 2, 4, 4), THEME)
    assert full == QRectF(0, 0, 8, 8)
    assert layers.image.levels is not None and tuple(layers.image.levels) == (0, LUT_SIZE - 1)
    assert layers.padding.path().isEmpty() and layers.edge.path().isEmpty()
    assert not layers.lines.path().isEmpty()
    assert len(layers.labels._cells) == 4 and layers.labels._notes == []


def test_rows_past_the_real_size_are_padding_and_say_empty(qtbot):
    _plot, layers = make(qtbot)
    image = np.zeros((2, 2), dtype=np.uint8)
    layers.draw((2, 2, 4.0, 4.0, 4, 8), image, lut_for(4), labels_for(2, 2, 4, 4), THEME)
    assert layers.padding.path().boundingRect() == QRectF(0, 4, 8, 4)
    assert layers.hatch.path() == layers.padding.path()
    assert not layers.edge.path().isEmpty()
    assert [text for _, text, _ in layers.labels._cells] == ["0,0", "0,1"]
    assert [text for _, text, _ in layers.labels._notes] == ["empty", "empty"]


def test_outlines_and_clear(qtbot):
    _plot, layers = make(qtbot)
    layers.draw((1, 2, 1.0, 4.0, 1, 8), np.zeros((1, 2), np.uint8), lut_for(2), [], THEME)
    layers.show_highlight([QRectF(0, 0, 4, 1)], THEME)
    layers.show_hover(QRectF(4, 0, 4, 1), THEME)
    assert layers.highlight.pen().color() == THEME.highlight
    assert layers.hover.path().boundingRect() == QRectF(4, 0, 4, 1)
    layers.clear_hover()
    assert layers.hover.path().isEmpty()
    layers.clear()
    assert layers.highlight.path().isEmpty() and layers.lines.path().isEmpty()
    assert layers.labels.boundingRect().isEmpty()
