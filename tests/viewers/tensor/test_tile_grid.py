import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QVBoxLayout, QWidget

from shardscope.backend.sharding.mesh import PRESETS, parse_mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.viewers.tensor.tile_grid import MAX_ZOOM_IN, ZOOM_OUT_MARGIN, TileGridView


def make(qtbot, shape, mesh, spec, size=(520, 420)):
    view = TileGridView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.set_tensor(shape, parse_mesh(mesh) if isinstance(mesh, str) else mesh, parse_spec(spec))
    return view


def test_2d_on_4x2_has_one_block_per_device(qtbot):
    view = make(qtbot, (64, 32), "data=4,model=2", "data,model")
    img = view.image_data()
    assert img.shape == (4, 2) and img.dtype == np.uint8 and img.flags.c_contiguous
    assert img.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert view.tile_at(2, 1) == (((32, 48), (16, 32)), (5,))
    assert view.layers.image.levels is not None


def test_replicated_tiles_list_their_devices(qtbot):
    view = make(qtbot, (64, 32), "data=4,model=2", "_,model")
    assert view.image_data().shape == (1, 2)
    assert view.tile_at(0, 0)[1] == (0, 2, 4, 6)
    assert "each on 4 devices" in view.summary.text()


def test_rank3_slider_changes_slice_without_rerange(qtbot):
    view = make(qtbot, (16, 8, 4), "data=4,model=2", "data,_,model")
    assert view.display_dims == (0, 2)
    view.set_display_dims(0, 1)
    assert view.display_dims == (0, 1)
    assert set(view.sliders) == {2}
    before = view.image_data().copy()
    range_before = view.view_box.viewRange()
    view.set_slice(2, 1)
    after = view.image_data()
    assert before.tolist() == [[0], [2], [4], [6]]
    assert after.tolist() == [[1], [3], [5], [7]]
    assert view.view_box.viewRange() == range_before


def test_uneven_shape_marks_padding(qtbot):
    view = make(qtbot, (10, 30), "data=4,model=8", "data,model")
    assert not view.layers.padding.path().isEmpty()
    assert "dim 0 pads 2" in view.summary.text()
    even = make(qtbot, (16, 32), "data=4,model=8", "data,model")
    assert even.layers.padding.path().isEmpty()


def test_empty_shards_are_noted(qtbot):
    view = make(qtbot, (3, 8), "data=4,model=2", "data,model")
    assert "empty shard" in view.summary.text()
    assert view.tile_at(3, 0)[0][0] == (3, 3)


def test_hover_emits_once_per_tile_change(qtbot):
    view = make(qtbot, (64, 32), "data=4,model=2", "data,model")
    view.show()
    qtbot.waitExposed(view)
    seen = []
    view.tileHovered.connect(seen.append)
    view.hover_view_point(4, 4)
    view.hover_view_point(6, 10)
    view.hover_view_point(20, 40)
    view.hover_view_point(21, 41)
    assert seen == [[0], [5]]
    assert "device 5" in view.status.text()


def test_invalid_spec_shows_message(qtbot):
    view = make(qtbot, (8, 8), "data=4,model=2", "nope,_")
    assert view.tile_map is None and "nope" in view.status.text()


def test_renders_256_devices(qtbot, render_dir, count_colors):
    view = make(qtbot, (1024, 1024), PRESETS["TPU 16x16 (v5e-256)"], "x,y", size=(700, 620))
    view.show()
    qtbot.waitExposed(view)
    image = view.grab()
    image.save(str(render_dir / "tile_grid_256.png"))
    assert count_colors(image) > 100
    uneven = make(qtbot, (10, 30, 7), "data=4,model=2", "data,model")
    uneven.show()
    qtbot.waitExposed(uneven)
    image = uneven.grab()
    image.save(str(render_dir / "tile_grid_uneven.png"))
    assert count_colors(image) > 8


def _wheel(widget, steps, modifiers=Qt.KeyboardModifier.NoModifier):
    """Turn the mouse wheel ``steps`` notches (positive: away from the user) over the
    middle of ``widget``, as the window system delivers it."""
    centre = QPointF(widget.rect().center())
    for _ in range(abs(steps)):
        event = QWheelEvent(
            centre,
            QPointF(widget.mapToGlobal(centre.toPoint())),
            QPoint(0, 0),
            QPoint(0, 120 if steps > 0 else -120),
            Qt.MouseButton.NoButton,
            modifiers,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)


def _in_a_dock(qtbot):
    """A tile grid in a scroll area too short for it, as the Tensor dock holds it."""
    area = QScrollArea()
    qtbot.addWidget(area)
    area.setWidgetResizable(True)
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.addWidget(QLabel("above"))
    grid = TileGridView()
    grid.setMinimumHeight(400)
    layout.addWidget(grid)
    below = QLabel("below")
    below.setMinimumHeight(400)
    layout.addWidget(below)
    area.setWidget(box)
    area.resize(400, 300)
    area.show()
    qtbot.waitExposed(area)
    grid.set_tensor((64, 32), parse_mesh("data=4,model=2"), parse_spec("data,model"))
    return area, grid


def test_the_plain_wheel_over_the_grid_scrolls_the_dock_and_leaves_the_zoom(qtbot):
    area, grid = _in_a_dock(qtbot)
    bar = area.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0
    before = grid.view_box.viewRange()
    _wheel(grid.plot.viewport(), -3)
    qtbot.waitUntil(lambda: bar.value() > 0)
    assert grid.view_box.viewRange() == before
    assert grid.zoom_factor() == pytest.approx(1 / 1.04, rel=0.01)
    _wheel(grid.plot.viewport(), 3)
    qtbot.waitUntil(lambda: bar.value() == 0)


def test_ctrl_wheel_zooms_the_grid_within_limits_and_the_dock_stays(qtbot):
    area, grid = _in_a_dock(qtbot)
    bar = area.verticalScrollBar()
    ctrl = Qt.KeyboardModifier.ControlModifier
    _wheel(grid.plot.viewport(), 2, ctrl)
    assert grid.zoom_factor() > 1.1
    # many notches in: stops at the closest zoom, never at a speck of one tile
    _wheel(grid.plot.viewport(), 80, ctrl)
    assert grid.zoom_factor() == pytest.approx(MAX_ZOOM_IN, rel=0.05)
    # many notches out: the whole tensor with a margin, never a speck in empty space
    _wheel(grid.plot.viewport(), -120, ctrl)
    assert grid.zoom_factor() == pytest.approx(1 / ZOOM_OUT_MARGIN, rel=0.05)
    assert bar.value() == 0
    # another tensor is shown whole again
    grid.set_tensor((16, 8), parse_mesh("data=4,model=2"), parse_spec("data,_"))
    assert grid.zoom_factor() == pytest.approx(1 / 1.04, rel=0.01)


def test_a_rank3_tensor_after_a_matrix_shows_its_slider_and_leaves_the_plot_where_it_was(
    qtbot,
):
    from tests.support.paints import fresh, on_screen, wait_painted

    view = make(qtbot, (64, 32), "data=4,model=2", "data,model")
    view.show()
    qtbot.waitExposed(view)
    wait_painted(qtbot, view)
    box, corner = view.plot_box.geometry(), view.plot.pos()
    assert view.sliders == {}
    view.set_tensor((16, 8, 4), parse_mesh("data=4,model=2"), parse_spec("data,_,model"))
    wait_painted(qtbot, view)
    ((dim, slider),) = view.sliders.items()
    assert slider.isVisible() and view._slider_labels[dim].text().startswith(f"dim {dim}")
    # the slider takes the row kept for it: the plot's box neither moves nor shrinks,
    # the plot stays in its corner
    assert view.plot_box.geometry() == box and view.plot.pos() == corner
    assert on_screen(view) == fresh(view)
    view.set_tensor((64, 32), parse_mesh("data=4,model=2"), parse_spec("data,model"))
    wait_painted(qtbot, view)
    assert view.sliders == {} and view.plot_box.geometry() == box


def _shown(qtbot, view):
    from tests.support.paints import wait_painted

    view.show()
    qtbot.waitExposed(view)
    wait_painted(qtbot, view)


def _labels_at_full_size(view) -> bool:
    labels = view.layers.labels
    placed = labels.placed(labels.deviceTransform(view.plot.viewportTransform()))
    return len(placed) == len(labels.texts) and all(
        size == labels.font.pointSizeF() for *_, size in placed
    )


def test_the_plot_takes_the_tensors_aspect_and_every_label_fits(qtbot):
    view = make(qtbot, (8, 32, 64), "data=4,model=2", "data,_,_")
    _shown(qtbot, view)
    box = view.view_box.sceneBoundingRect()
    # rows dim 0 (8), cols dim 1 (32): a flat picture, far less than the dock's width
    assert view.display_dims == (0, 1)
    assert box.width() >= 2.5 * box.height() and box.width() < view.plot_box.width()
    assert _labels_at_full_size(view)
    # the user steps the rows picker down twice (dim 1 swaps the two, then dim 2): dim 2
    # (64) down the rows, dim 0 (8) across, a tall, narrow picture
    view.row_combo.setFocus()
    qtbot.keyClick(view.row_combo, Qt.Key.Key_Down)
    qtbot.keyClick(view.row_combo, Qt.Key.Key_Down)
    assert view.display_dims == (2, 0)
    qtbot.waitUntil(lambda: view.view_box.sceneBoundingRect() != box)
    tall = view.view_box.sceneBoundingRect()
    assert tall.height() > tall.width() and tall.topLeft() == box.topLeft()
    assert _labels_at_full_size(view)
    # a square tensor: a square picture
    view.set_tensor((64, 64), parse_mesh("data=4,model=2"), parse_spec("data,model"))
    square = view.view_box.sceneBoundingRect()
    assert square.width() == pytest.approx(square.height(), abs=2)
    assert _labels_at_full_size(view)


def test_many_row_tiles_on_a_flat_tensor_still_get_room_for_their_labels(qtbot):
    view = make(qtbot, (8, 64), "data=8", "data,_")
    _shown(qtbot, view)
    assert view.image_data().shape == (8, 1)
    assert _labels_at_full_size(view)


def test_the_empty_plot_shows_its_hint_where_the_tiles_go_on_the_docks_background(qtbot):
    view = make(qtbot, (8, 32), "data=4,model=2", "data,_")
    view.show_empty("Select a tensor")
    _shown(qtbot, view)
    hint = view.hint.geometry()
    assert view.hint.isVisible() and hint.top() == 0
    dock = view.palette().window().color()
    image = view.grab().toImage()
    corner = view.plot.mapTo(view, view.plot.rect().bottomRight() - QPoint(3, 3))
    assert image.pixelColor(corner) == dock
    # the first tensor's tiles are drawn where the hint's text was, from its top
    view.set_tensor((8, 32), parse_mesh("data=4,model=2"), parse_spec("data,_"))
    _shown(qtbot, view)
    tiles = view.view_box.sceneBoundingRect().toRect()
    assert not view.hint.isVisible() and tiles.top() <= hint.top() + 12
    # and around the smaller plot the dock's colour, as before
    image = view.grab().toImage()
    below = view.plot_box.mapTo(view, view.plot_box.rect().bottomRight() - QPoint(3, 3))
    assert image.pixelColor(below) == dock


def test_a_picture_of_the_tiles_alone_may_draw_them_larger(qtbot):
    view = make(qtbot, (32, 64), "data=4,model=2", "data,_", size=(1200, 840))
    _shown(qtbot, view)
    small = view.view_box.sceneBoundingRect()
    view.set_largest_plot(1100, 680)
    qtbot.waitUntil(lambda: view.view_box.sceneBoundingRect().width() > 1000)
    large = view.view_box.sceneBoundingRect()
    assert large.height() == pytest.approx(large.width() / 2, abs=2)
    assert large.width() > 3 * small.width() and _labels_at_full_size(view)
