"""Repainting only what changed: the block diff, quiet changes, and the diffed graphics view."""

import numpy as np
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QRegion
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QLabel, QVBoxLayout, QWidget

from shardscope.viewers.common.damage import (
    BLOCK,
    DiffedView,
    _moved,
    best_shift,
    changed_region,
    quiet_change,
    settle_layouts,
    shifted_change,
)
from tests.support.paints import PaintLog, fresh, on_screen, region_area, wait_painted

BW, BH = BLOCK  # the blocks compared: (width, height)


def _block_at(x: int, y: int) -> QRect:
    return QRect(x // BW * BW, y // BH * BH, BW, BH)


def _image(width=100, height=60, color="#202020") -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    return image


def test_identical_images_differ_nowhere():
    assert changed_region(_image(), _image()).isEmpty()


def test_one_changed_pixel_is_one_block():
    before, after = _image(), _image()
    after.setPixelColor(40, 20, QColor("white"))
    region = changed_region(before, after)
    assert region == QRegion(_block_at(40, 20))
    # square blocks when asked for
    assert changed_region(before, after, 4) == QRegion(QRect(40, 20, 4, 4))


def test_neighbouring_blocks_merge_and_the_edge_block_is_clipped():
    height = 8 * BH + 1  # not a whole number of blocks: the last row of blocks is cut short
    assert height % BH
    before, after = _image(100, height), _image(100, height)
    for x in range(10, 60):
        after.setPixelColor(x, height - 1, QColor("white"))
    region = changed_region(before, after)
    top = (height - 1) // BH * BH
    left, right = 10 // BW * BW, -(-60 // BW) * BW
    assert list(region) == [QRect(left, top, right - left, height - top)]


def test_a_size_change_compares_the_shared_part_and_counts_the_rest():
    before, after = _image(100, 60), _image(100, 80)
    region = changed_region(before, after)
    assert region == QRegion(QRect(0, 60, 100, 20))
    assert changed_region(None, after) == QRegion(after.rect())


def _shown(qtbot, widget, width, height):
    """``widget`` on screen at that size, painted."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    wait_painted(qtbot, widget)
    return widget


def _panel(qtbot, text="shard the batch over data and the features over model"):
    panel = QWidget()
    layout = QVBoxLayout(panel)
    label = QLabel(text)
    layout.addWidget(label)
    layout.addStretch(1)
    return _shown(qtbot, panel, 480, 160), label


def test_a_quiet_change_repaints_the_changed_text_only_and_the_screen_is_right(qtbot):
    panel, label = _panel(qtbot)
    with PaintLog(panel) as log:
        with quiet_change(panel):
            label.setText("shard the batch over data and the features over mesh")
        qtbot.wait(30)
    painted = log.area()
    assert 0 < painted < panel.width() * panel.height() / 4
    assert on_screen(panel) == fresh(panel)


def test_a_quiet_change_that_changes_nothing_repaints_nothing(qtbot):
    panel, label = _panel(qtbot)
    with PaintLog(panel) as log:
        with quiet_change(panel):
            label.setText("something else")
            label.setText("shard the batch over data and the features over model")
        qtbot.wait(30)
    assert log.events == []


def test_widgets_made_and_laid_out_inside_a_quiet_change_show_afterwards(qtbot):
    panel, label = _panel(qtbot)
    with quiet_change(panel):
        extra = QLabel("a new line under the first", panel)
        panel.layout().insertWidget(1, extra)
        extra.show()
        settle_layouts(panel)
    qtbot.wait(30)
    assert extra.updatesEnabled() and label.updatesEnabled() and panel.updatesEnabled()
    assert extra.isVisible() and extra.geometry().top() >= label.geometry().bottom()
    assert on_screen(panel) == fresh(panel)
    # and it paints itself on later changes, as any widget
    with PaintLog(panel) as log:
        extra.setText("changed later")
        qtbot.wait(30)
    assert log.region(extra).intersects(extra.geometry())


def _view(qtbot):
    view = QGraphicsView()
    scene = QGraphicsScene(0, 0, 400, 300, view)  # the view keeps it
    big = scene.addRect(QRectF(0, 0, 400, 300), Qt.PenStyle.NoPen, QBrush(QColor("#335577")))
    dot = scene.addRect(QRectF(190, 140, 10, 10), Qt.PenStyle.NoPen, QBrush(QColor("white")))
    view.setScene(scene)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    qtbot.addWidget(view)
    view.resize(420, 320)
    diffed = DiffedView(view)
    view.show()
    qtbot.waitExposed(view)
    wait_painted(qtbot, view)
    return view, diffed, big, dot


def test_a_diffed_view_repaints_the_blocks_a_scene_change_altered(qtbot):
    view, _diffed, big, dot = _view(qtbot)
    with PaintLog(view) as log:
        dot.setBrush(QBrush(QColor("orange")))
        qtbot.wait(50)
    painted = log.area()
    assert 0 < painted <= 1024  # the few blocks the dot covers, nowhere else
    assert on_screen(view.viewport()) == fresh(view.viewport())


def test_a_scene_change_that_looks_the_same_repaints_nothing(qtbot):
    view, _diffed, big, dot = _view(qtbot)
    with PaintLog(view) as log:
        # changed and changed back before the next paint: Qt would repaint the dot
        dot.setZValue(-1)
        dot.setZValue(0)
        qtbot.wait(50)
    assert log.events == []


def test_a_diffed_view_still_repaints_all_of_itself_when_resized(qtbot):
    view, _diffed, big, dot = _view(qtbot)
    with PaintLog(view) as log:
        view.resize(300, 200)
        qtbot.wait(50)
    viewport = view.viewport()
    assert region_area(log.region(viewport)) >= viewport.width() * viewport.height()
    dot.setBrush(QBrush(QColor("red")))
    qtbot.wait(50)
    assert on_screen(viewport) == fresh(viewport)


def test_images_with_alpha_are_compared_by_their_own_pixels():
    # a grab with an alpha channel is converted before comparing: the pixels compared
    # must be the converted image's, not memory it freed
    before = _image().convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)
    after = QImage(before)
    after.setPixelColor(40, 20, QColor("white"))
    for _ in range(3):
        assert changed_region(before, after) == QRegion(_block_at(40, 20))


def _rows(height=120, width=64, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2**24, (height, width), dtype=np.uint32)


def test_the_shift_found_is_the_move_of_the_rows_below_the_first_change():
    before = _rows()
    after = before.copy()
    after[40 + 25 :] = before[40 : 120 - 25]  # below row 40, all moved down 25 rows
    after[40 : 40 + 25] = _rows(25, 64, seed=2)  # what the move uncovered: new
    assert best_shift(before, after) == (40, 25)
    # moved the other way (folding): up 25
    assert best_shift(after, before) == (40, -25)
    # what scrolling by it leaves on screen differs from the new picture only where
    # the move uncovered something
    moved = _moved(before, after, 40, 0, 25)
    assert (moved[65:] == after[65:]).all() and (moved[40:65] != after[40:65]).all()
    assert (moved[:40] == after[:40]).all()


def test_no_shift_is_found_where_nothing_moved_as_one():
    before = _rows()
    after = _rows(seed=3)
    assert best_shift(before, after)[1] == 0
    assert best_shift(before, before) == (0, 0)
    # plain rows (empty background) are no evidence of a move
    plain = np.zeros((120, 64), np.uint32)
    assert best_shift(plain, plain + 1)[1] == 0


def test_changed_blocks_a_short_gap_apart_are_one_run_and_far_apart_two():
    from shardscope.viewers.common.damage import GAP

    before, near, far = _image(), _image(), _image()
    gap = GAP * BW  # unchanged pixels between the two changed blocks
    for image, second in ((near, 10 + BW + gap), (far, 10 + BW + gap + BW)):
        image.setPixelColor(10, 20, QColor("white"))
        image.setPixelColor(second, 20, QColor("white"))
    top = 20 // BH * BH
    (run,) = list(changed_region(before, near))
    assert run == QRect(10, top, 2 * BW + gap, BH)
    assert len(list(changed_region(before, far))) == 2
    assert len(list(changed_region(before, near, gap=0))) == 2


def _scrolled_view(qtbot, height):
    scene = QGraphicsScene()
    scene.setSceneRect(QRectF(0, 0, 300, height))
    scene.addRect(QRectF(20, 20, 100, 60), brush=QBrush(QColor("#4060A0")))
    return scene, _shown(qtbot, QGraphicsView(scene), 400, 300)


def test_a_scene_that_now_needs_a_scroll_bar_shows_it(qtbot):
    scene, view = _scrolled_view(qtbot, 200)
    bar = view.verticalScrollBar()
    assert not bar.isVisible()
    with shifted_change(view):
        scene.setSceneRect(QRectF(0, 0, 300, 1600))
    qtbot.waitUntil(bar.isVisible)
    assert bar.maximum() > 0
    # and the view goes on laying its bars out itself afterwards
    scene.setSceneRect(QRectF(0, 0, 300, 200))
    qtbot.waitUntil(lambda: not bar.isVisible())
