"""What selecting a tensor repaints, as a user clicks one badge after another: only the
pixels that differ, each widget once, and the screen shows the new tensor."""

from PySide6.QtCore import QPointF, Qt

from tests.support.paints import PaintLog, fresh, on_screen, region_area, wait_painted


def _shown_badges(view):
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    return {
        b.value_id: b
        for b in view.badges
        if b.value_id is not None and visible.contains(b.sceneBoundingRect())
    }


def _click(qtbot, view, badge):
    rect = badge.sceneBoundingRect()
    pos = view.mapFromScene(QPointF(rect.left() + 4, rect.center().y()))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_selecting_another_tensor_repaints_each_widget_once_and_little_of_the_inspector(
    make_window, qtbot
):
    window = make_window("example:mlp")
    view, graph = window.graph, window.session.graph
    badges = _shown_badges(view)
    ranks = {}
    for vid in badges:
        ranks.setdefault(len(graph.values[vid].shape or ()), vid)
    assert 1 in ranks and 2 in ranks, "example:mlp shows a vector and a matrix"
    first, second = ranks[2], ranks[1]
    dock = window.docks["dock_tensor"]
    scroll_bar = dock.widget().verticalScrollBar()
    _click(qtbot, view, badges[first])
    qtbot.waitUntil(lambda: window.selected_value == first)
    wait_painted(qtbot, window)
    assert scroll_bar.isVisible()
    with PaintLog(window) as log:
        _click(qtbot, view, badges[second])
        qtbot.waitUntil(lambda: window.selected_value == second)
        wait_painted(qtbot, window)
    assert window.inspector.title.text() == graph.values[second].display_name
    # one paint per widget: nothing is repainted a second time once the layouts settle
    widgets = [w for w, _ in log.events]
    twice = {type(w).__name__ for w in widgets if widgets.count(w) > 1}
    assert not twice, f"repainted twice in one selection: {twice}"
    # a vector after a matrix: the chips, texts and tiles differ, not the whole dock
    painted = region_area(log.region(dock))
    assert 0 < painted <= 0.6 * dock.width() * dock.height()
    # the scroll bar stays: a bar that came and went would narrow the dock's contents
    assert scroll_bar.isVisible()
    inspector = window.inspector
    assert on_screen(inspector) == fresh(inspector)


def test_selecting_a_tensor_of_the_same_shape_and_sharding_repaints_its_texts_only(
    make_window, qtbot
):
    window = make_window("example:mlp")
    view, graph, session = window.graph, window.session.graph, window.session
    badges = _shown_badges(view)
    by_look = {}
    for vid in badges:
        key = (graph.values[vid].shape, session.laid_out_spec(vid))
        by_look.setdefault(key, []).append(vid)
    pair = next((vids[:2] for vids in by_look.values() if len(vids) > 1), None)
    assert pair, "example:mlp shows two tensors that look alike"
    _click(qtbot, view, badges[pair[0]])
    qtbot.waitUntil(lambda: window.selected_value == pair[0])
    wait_painted(qtbot, window)
    plot = window.inspector.tile_grid.plot
    with PaintLog(window) as log:
        _click(qtbot, view, badges[pair[1]])
        qtbot.waitUntil(lambda: window.selected_value == pair[1])
        wait_painted(qtbot, window)
    # the same tiles: the plot is not repainted at all, the dock only where texts differ
    assert region_area(log.region(plot)) == 0
    dock = window.docks["dock_tensor"]
    assert 0 < region_area(log.region(dock)) <= 0.25 * dock.width() * dock.height()
    assert on_screen(window.inspector) == fresh(window.inspector)
