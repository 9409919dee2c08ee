"""The grid over badge rectangles answers what testing every rectangle would."""

import random

from shardscope.viewers.graph.spatial import RectIndex


def _covered_by_all(rect, rects):
    x, y, w, h = rect
    total = 0.0
    for ox, oy, ow, oh in rects:
        dx = min(x + w, ox + ow) - max(x, ox)
        dy = min(y + h, oy + oh) - max(y, oy)
        if dx > 0 and dy > 0:
            total += dx * dy
    return total


def test_covered_equals_all_pairs_and_tests_only_neighbours():
    rng = random.Random(7)
    rects = [
        (rng.uniform(-2000, 8000), rng.uniform(-500, 30000), rng.uniform(16, 220), 24.0)
        for _ in range(3000)
    ]
    index = RectIndex(rects)
    spots = [(rng.uniform(-2000, 8000), rng.uniform(-500, 30000), 120.0, 18.0) for _ in range(500)]
    for spot in spots:
        assert abs(index.covered(spot) - _covered_by_all(spot, rects)) < 1e-6
    assert index.queries == 500
    assert index.tests < index.queries * len(rects) / 50


def test_rectangle_spanning_cells_counts_once_and_edges_do_not_overlap():
    index = RectIndex([(0, 0, 1000, 10)], cell=100)
    assert index.covered((50, 0, 800, 10)) == 800 * 10
    assert index.covered((1000, 0, 50, 10)) == 0.0  # touching is not covering
    assert index.covered((-60, -5, 50, 5)) == 0.0
    assert RectIndex([]).covered((0, 0, 10, 10)) == 0.0
