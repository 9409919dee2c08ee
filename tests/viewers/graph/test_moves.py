"""How far a redrawing moved the nodes on screen, and the pixel or two of rounding the
view scrolls back: what unfolds moves, the rest stays where it was."""

from PySide6.QtCore import Qt

from shardscope.viewers.graph.moves import (
    SNAP_PIXELS,
    moves_from,
    moves_since,
    node_points,
    scope_anchor,
    snap_to,
)


def scrolled(view, dx, dy):
    bars = view.horizontalScrollBar(), view.verticalScrollBar()
    bars[0].setValue(bars[0].value() + dx)
    bars[1].setValue(bars[1].value() + dy)


def zoomed_in(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    view.zoom(3.0)  # room to scroll down and up
    view.centerOn(view.nodes[len(view.nodes) // 2])
    return view


def test_node_points_are_where_each_node_is_in_the_viewport(panel_for):
    view = zoomed_in(panel_for)
    points = node_points(view, view.nodes)
    assert set(points) == {i.node.key for i in view.nodes}
    item = view.nodes[3]
    assert points[item.node.key] == view.mapFromScene(item.pos())


def test_a_scroll_moves_every_node_by_the_same_pixels(panel_for):
    view = zoomed_in(panel_for)
    before = node_points(view, view.nodes)
    moved = moves_from(view, lambda: view.nodes, before)
    assert moved() is None
    scrolled(view, 0, 10)
    assert moves_since(view, view.nodes, before) == {(0, -10): len(view.nodes)}
    assert moved() == (0, -10)
    # nodes not drawn before do not count
    assert moves_since(view, view.nodes, {}) == {}


def test_snapping_scrolls_back_a_pixel_or_two_but_not_a_real_move(panel_for):
    view = zoomed_in(panel_for)
    before = node_points(view, view.nodes)
    scrolled(view, 0, -SNAP_PIXELS)
    snap_to(view, view.nodes, before)
    assert moves_since(view, view.nodes, before) == {(0, 0): len(view.nodes)}
    scrolled(view, 0, SNAP_PIXELS + 5)
    snap_to(view, view.nodes, before)
    assert moves_since(view, view.nodes, before) == {(0, -SNAP_PIXELS - 5): len(view.nodes)}


def test_a_scopes_anchor_is_its_first_drawn_node(panel_for):
    view = zoomed_in(panel_for)
    first = next(i for i in view.nodes if i.node.scope == "layer2")
    assert scope_anchor(view, view.nodes, "layer2") == ("layer2", view.mapFromScene(first.pos()))
    assert scope_anchor(view, view.nodes, "layer") is None  # a prefix is not a scope
    assert scope_anchor(view, view.nodes, "sgd") is None


def test_unfolding_a_scope_by_double_click_leaves_the_rest_where_it_was_on_screen(panel_for, qtbot):
    session, panel = panel_for("example:transformer?layers=24")
    view = panel.view
    item = next(i for i in view.nodes if i.node.scope == "transpose(jvp(layer_10))")
    view.centerOn(item)
    before = {i.node.key: view.mapFromScene(i.pos()) for i in view.nodes}
    scope_y = item.pos().y()
    above = {i.node.key for i in view.nodes if i.pos().y() < scope_y}
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=before[item.node.key])
    assert "transpose(jvp(layer_10))" in view.expanded()
    after = {i.node.key: view.mapFromScene(i.pos()) for i in view.nodes}
    assert item.node.key not in after
    # not a pixel off either (a drawing a pixel off is all sent again over X11)
    moves = {k: after[k] - before[k] for k in before if k in after}
    assert above and all(moves[k].manhattanLength() == 0 for k in above)
    below = [moves[k] for k in moves if k not in above and moves[k].manhattanLength() > 2]
    assert below  # ... and everything below moved down together
    assert all((m - below[0]).manhattanLength() <= 2 and m.y() > 100 for m in below)
