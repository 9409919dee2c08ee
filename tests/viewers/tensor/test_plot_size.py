"""The tile plot's data area: the tensor's aspect, within the caps, every label fitting."""

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QSize

from shardscope.viewers.tensor.plot_size import (
    LABEL_MARGIN,
    MAX_ASPECT,
    MAX_HEIGHT,
    MAX_WIDTH,
    MIN_SIDE,
    PlotBox,
    plot_margins,
    tiles_area,
)

ROOM = (400, 400)
LABEL = (30, 15)


def test_a_square_tensor_is_drawn_square_at_the_height_cap():
    assert tiles_area(ROOM, 1.0, (2, 2), LABEL) == (MAX_HEIGHT, MAX_HEIGHT)


def test_a_flat_tensor_is_as_wide_as_allowed_and_as_tall_as_its_aspect():
    width, height = tiles_area(ROOM, 1 / 4, (1, 2), LABEL)
    assert width == MAX_WIDTH and height == MAX_WIDTH // 4


def test_a_tall_tensor_is_as_tall_as_allowed_and_as_wide_as_its_aspect():
    assert tiles_area(ROOM, 2.0, (2, 1), LABEL) == (MAX_HEIGHT // 2, MAX_HEIGHT)


def test_a_narrow_dock_narrows_it_keeping_the_aspect():
    assert tiles_area((100, 400), 1.0, (1, 1), LABEL) == (100, 100)


def test_every_label_fits_where_the_aspect_alone_would_squeeze_it():
    # 8 rows of tiles on a flat tensor: each row a label's height and margin tall
    width, height = tiles_area(ROOM, 1 / 4, (8, 1), LABEL)
    assert height == min(MAX_HEIGHT, 8 * (LABEL[1] + LABEL_MARGIN)) and width == MAX_WIDTH
    # 4 columns of a tall one: each a label's width and margin wide
    width, height = tiles_area(ROOM, 4.0, (1, 4), LABEL)
    assert width == 4 * (LABEL[0] + LABEL_MARGIN) and height == MAX_HEIGHT
    # many columns: wider than the cap, as far as the room goes (16 of them fit in 400)
    assert tiles_area(ROOM, 1.0, (1, 10), LABEL) == (10 * (LABEL[0] + LABEL_MARGIN), MAX_HEIGHT)
    # never past the room nor the height cap: labels that cannot fit there are drawn
    # smaller
    assert tiles_area(ROOM, 1.0, (64, 64), LABEL) == (ROOM[0], MAX_HEIGHT)


def test_extreme_aspects_are_drawn_no_flatter_than_the_limit():
    width, height = tiles_area(ROOM, 8 / 65536, (1, 8), None)
    assert width == MAX_WIDTH and height == max(MIN_SIDE, round(MAX_WIDTH / MAX_ASPECT))
    width, height = tiles_area(ROOM, 65536 / 8, (8, 1), None)
    assert height == MAX_HEIGHT and width == MIN_SIDE


def test_no_room_or_no_aspect_still_gives_an_area():
    assert tiles_area((0, 0), 0.0, (1, 1), None) == (1, 1)
    assert tiles_area(ROOM, 0.0, (1, 1), None) == (MAX_HEIGHT, MAX_HEIGHT)


def test_a_plot_sized_by_its_margins_has_the_data_area_asked_for_in_its_box(qtbot):
    plot = pg.PlotWidget()
    margins = plot_margins(plot)
    assert margins[0] > 0 and margins[1] > 0
    box = PlotBox(plot, MAX_HEIGHT + margins[1])
    qtbot.addWidget(box)
    box.resize(500, 400)
    plot.setFixedSize(200 + margins[0], 80 + margins[1])
    box.show()
    qtbot.waitExposed(box)
    qtbot.waitUntil(lambda: plot.getPlotItem().getViewBox().geometry().width() < 300)
    data = plot.getPlotItem().getViewBox().geometry()
    assert QSize(round(data.width()), round(data.height())) == QSize(200, 80)
    # the box keeps its height, the plot its top left corner
    assert box.height() == MAX_HEIGHT + margins[1] and plot.pos() == QPoint(0, 0)
