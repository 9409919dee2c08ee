"""Heat maps of one run tensor: one picture per device at its mesh position, drawing that
device's values on one shared scale; replicas that differ are outlined red and named."""

import numpy as np
import pytest

from shardscope.backend.run.result import Shard, TensorRun
from shardscope.backend.run.shards import preview
from shardscope.viewers.run.heatmap import (
    MISMATCH,
    STRIP,
    HeatmapView,
    color_of,
    mesh_layout,
    mismatch_lines,
)


def tensor_of(data: np.ndarray, rows_of: dict[int, tuple[int, int]], tamper=None) -> TensorRun:
    """Rows ``rows_of[device]`` of ``data`` on each device; ``tamper(device, piece)`` may
    change a device's copy."""
    shards = []
    for device, (a, b) in sorted(rows_of.items()):
        piece = data[a:b].copy()
        if tamper is not None:
            tamper(device, piece)
        values, shape = preview(piece)
        index = ((a, b), *((0, n) for n in data.shape[1:]))
        checksum = f"{hash(piece.tobytes()) & 0xFFFF:04x}"
        shards.append(Shard(device, index, piece.shape, checksum, tuple(values), tuple(shape)))
    groups: dict = {}
    for s in shards:
        groups.setdefault(s.index, {}).setdefault(s.checksum, []).append(s.device)
    bad = tuple(
        tuple(sorted(d for ds in sums.values() for d in ds))
        for sums in groups.values()
        if len(sums) > 1
    )
    return TensorRun(
        "x", data.shape, "float32", "data,_", "", tuple(shards), None, replica_mismatches=bad
    )


ROWS = {0: (0, 4), 1: (0, 4), 2: (4, 8), 3: (4, 8)}  # data=2, model=2: rows split on data


@pytest.fixture
def view(qtbot):
    widget = HeatmapView()
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    return widget


def test_each_device_draws_its_own_values_on_one_shared_scale(view, qtbot):
    data = np.arange(8 * 6, dtype=np.float64).reshape(8, 6) - 10
    view.set_tensor(tensor_of(data, ROWS), (2, 2), [0, 1, 2, 3])
    assert view.scale == (data.min(), data.max())
    assert view.lines == []
    image = view.grab().toImage()
    for device, (a, b) in ROWS.items():
        np.testing.assert_array_equal(view.tiles[device], data[a:b])
        for r, c in ((0, 0), (3, 5), (1, 2)):
            square = view.value_at(device, r, c)
            got = image.pixelColor(square.center())
            want = color_of(data[a + r, c], *view.scale)
            assert got.getRgb()[:3] == want.getRgb()[:3], (device, r, c)
    # laid out like the mesh: model along a row, data down the columns
    rect = {d: view.tile_rect(d) for d in ROWS}
    assert rect[0].y() == rect[1].y() < rect[2].y() == rect[3].y()
    assert rect[0].x() == rect[2].x() < rect[1].x() == rect[3].x()


def test_the_device_order_places_the_pictures(view):
    data = np.arange(48.0).reshape(8, 6)
    view.set_tensor(tensor_of(data, ROWS), (2, 2), [3, 2, 1, 0])
    assert view.tile_rect(3).x() < view.tile_rect(2).x()
    assert view.tile_rect(3).y() < view.tile_rect(0).y()


def test_replicas_that_differ_are_outlined_red_and_named_with_the_difference(view):
    data = np.zeros((8, 6))

    def tamper(device, piece):
        if device == 3:
            piece[1, 2] = 0.25

    tensor = tensor_of(data, ROWS, tamper)
    assert tensor.replica_mismatches == ((2, 3),)
    view.set_tensor(tensor, (2, 2), [0, 1, 2, 3])
    assert view.flagged == {2, 3}
    assert view.lines == [
        "Devices 2, 3 should hold the same piece [4:8, 0:6] but differ: max |difference| 0.25"
    ]
    image = view.grab().toImage()
    outline = view.image_rect(2).adjusted(-2, -2, 1, 1)
    assert image.pixelColor(outline.topLeft()).getRgb()[:3] == MISMATCH.getRgb()[:3]
    clean = view.image_rect(0).adjusted(-2, -2, 1, 1)
    assert image.pixelColor(clean.topLeft()).getRgb()[:3] != MISMATCH.getRgb()[:3]


def test_without_values_the_difference_is_said_in_bytes():
    shards = (Shard(0, ((0, 2),), (2,), "aa"), Shard(1, ((0, 2),), (2,), "bb"))
    tensor = TensorRun("y", (2,), "float32", "_", "", shards, None, replica_mismatches=((0, 1),))
    assert mismatch_lines(tensor) == [
        "Devices 0, 1 should hold the same piece [0:2] but differ: their bytes differ "
        "(no values came back to compare)"
    ]


def test_large_and_many_dimensional_shards_say_how_they_are_drawn(view):
    data = np.random.default_rng(1).normal(size=(2, 300, 3, 70))
    rows = {0: (0, 1), 1: (1, 2)}
    view.set_tensor(tensor_of(data, rows), (2,), [0, 1])
    assert view.tiles[0].shape == (60, 70 // 2)
    assert any("block means" in line for line in view.lines)
    assert any(
        "4-D shards drawn with their leading dimensions flattened" in line for line in view.lines
    )
    # a 1-D mesh of two: side by side
    assert view.tile_rect(0).y() == view.tile_rect(1).y()


def test_no_values_and_no_tensor(view):
    shards = (Shard(0, ((0, 2),), (2,), "aa"),)
    view.set_tensor(TensorRun("y", (2,), "float32", "_", "", shards, None), (1,), [0])
    assert view.tiles == {} and view.scale is None
    assert "No values came back" in view.lines[0]
    view.set_tensor(None)
    assert view.tensor is None and view.tiles == {}
    view.grab()  # draws the hint without failing


def test_mesh_layout():
    assert mesh_layout((4, 2)) == (4, 2)
    assert mesh_layout((2, 2, 2)) == (4, 2)
    assert mesh_layout((12,)) == (2, 8)
    assert mesh_layout(()) == (1, 1)


def test_a_one_dimensional_shard_is_a_strip_of_block_means(view):
    data = np.arange(256.0)
    rows = {0: (0, 128), 1: (128, 256)}
    view.set_tensor(tensor_of(data, rows), (2,), [0, 1])
    np.testing.assert_array_equal(view.tiles[1], data[128:].reshape(64, 2).mean(axis=1)[None])
    strip = view.image_rect(0)
    assert strip.height() >= STRIP and strip.width() == 64 * view.pixel
    assert view.lines == [
        "Shards of [128] drawn as 1x64 block means (at most 64 values a side; the worker "
        "sends large shards averaged)."
    ]


def test_a_collectives_device_groups_are_outlined_each_in_its_colour(view):
    data = np.arange(48, dtype=np.float64).reshape(8, 6)
    view.set_tensor(tensor_of(data, ROWS), (2, 2), [0, 1, 2, 3])
    assert view.groups == [] and view.legend_text() == ""
    top_before = view.tile_rect(0).y()
    view.set_groups([(0, 2), (1, 3)], "all-reduce")
    assert view.groups == [(0, 2), (1, 3)]
    assert view.legend_text() == "Outlined: all-reduce device groups: g0 {0,2} g1 {1,3}"
    assert view.tile_rect(0).y() > top_before  # the legend line sits above the pictures
    image = view.grab().toImage()
    for device in range(4):
        group = view.group_of(device)
        assert group == device % 2
        corner = view.group_rect(device).topLeft()
        want = view.group_color(group).getRgb()[:3]
        assert image.pixelColor(corner).getRgb()[:3] == want
    assert view.group_color(0) != view.group_color(1)
    view.set_groups([])
    assert view.groups == [] and view.tile_rect(0).y() == top_before
    image = view.grab().toImage()
    corner = view.group_rect(0).topLeft()
    assert image.pixelColor(corner).getRgb()[:3] != view.group_color(0).getRgb()[:3]


def test_a_device_whose_tile_is_all_padding_draws_no_picture(view, qtbot):
    # 3 rows over 4 devices in tiles of 1: device 3's tile lies past the end.
    data = np.arange(3 * 4, dtype=np.float64).reshape(3, 4)
    view.set_tensor(tensor_of(data, {0: (0, 1), 1: (1, 2), 2: (2, 3), 3: (3, 3)}), (4,), None)
    assert sorted(view.tiles) == [0, 1, 2] and view.scale == (0.0, 11.0)
    assert view.lines == []
    view.grab()  # paints every device's box, the empty one too


def test_a_one_row_mesh_wraps_to_use_a_short_wide_dock_and_a_grid_keeps_its_shape(qtbot):
    from PySide6.QtWidgets import QScrollArea

    area = QScrollArea()
    area.setWidgetResizable(True)
    view = HeatmapView()
    area.setWidget(view)
    qtbot.addWidget(area)
    area.resize(900, 300)  # the Run dock's heat map tab: wide and short
    area.show()
    data = np.arange(32 * 16, dtype=np.float64).reshape(32, 16)
    view.set_tensor(tensor_of(data, {d: (4 * d, 4 * d + 4) for d in range(8)}), (8,))
    qtbot.waitUntil(lambda: view.width() > 800, timeout=5000)
    rects = [view.tile_rect(d) for d in range(8)]
    rows = sorted({r.y() for r in rects})
    assert len(rows) > 1  # wrapped, not one row of small pictures
    # bigger than one row of eight would allow, and all on screen without scrolling
    assert all(r.width() > 900 / 8 for r in rects)
    assert not area.verticalScrollBar().isVisible()
    assert not area.horizontalScrollBar().isVisible()
    # row-major: device order reads left to right, then down
    assert [(r.y(), r.x()) for r in rects] == sorted((r.y(), r.x()) for r in rects)

    # a 2-D mesh keeps its grid: data=2 rows of model=4
    view.set_tensor(
        tensor_of(data[:16], {d: (8 * (d // 4), 8 * (d // 4) + 8) for d in range(8)}), (2, 4)
    )
    rects = [view.tile_rect(d) for d in range(8)]
    assert len({r.y() for r in rects}) == 2 and len({r.x() for r in rects}) == 4
