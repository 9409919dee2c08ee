"""A drawing built in slices is the drawing built at once, and shows edits made meanwhile."""

from shardscope.backend.program.layout import Frame, all_scopes, build_layout
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.graph.staging import StagedDrawing


def unfolded_layout(session, view):
    graph = session.graph
    frame = Frame(graph.main)
    return build_layout(graph, frame, frozenset(all_scopes(graph, view.index, frame)))


def picture(scene):
    """What the scene shows: its nodes, badges (place and dims) and edges, the bounds."""
    nodes = [(n.node.key, n.x(), n.y()) for n in scene.nodes]
    badges = [(b.value_ids, b.x(), b.y(), tuple(map(tuple, b.dims or ()))) for b in scene.badges]
    edges = [e.path().boundingRect().getRect() for e in scene.edges]
    return nodes, badges, edges, scene.sceneRect().getRect()


def test_slices_make_the_same_drawing_as_one_go(panel_for):
    session, panel = panel_for("example:transformer?layers=2")
    view, scene = panel.view, panel.view.graph_scene
    layout = unfolded_layout(session, view)
    scene.clear_items()
    scene.add_layout(layout, view.style_)
    at_once = picture(scene)
    staged = scene.stage(layout, view.style_)
    slices = sum(1 for _ in staged.steps(0.0))
    assert slices > 20 and staged.done
    assert picture(scene) == at_once  # nothing of the new one is in the scene yet
    scene.show_staged(staged)
    assert scene.staging is None
    assert picture(scene) == at_once
    assert scene.header_index is staged.header_index and len(scene.header_index) == len(
        scene.badges
    )


def test_an_edit_made_while_building_shows_when_the_drawing_does(panel_for):
    session, panel = panel_for("example:mlp")
    view, scene = panel.view, panel.view.graph_scene
    (x,) = [v for v in session.graph.values if v.display_name == "x"]
    staged = scene.stage(view.layout_, view.style_)
    steps = staged.steps(0.0)
    next(steps)
    for _ in steps:  # the badge of x is made before the edit
        pass
    assert session.set_spec(x.id, Spec.of("model", "data"), validate=False)
    assert x.id in staged.stale_values
    (made,) = staged.badges_by_value[x.id]
    assert [tuple(d) for d in made.dims] != [("model",), ("data",)]  # made before the edit
    scene.show_staged(staged)
    (badge,) = scene.badges_of(x.id)
    assert badge is made
    assert [tuple(d) for d in badge.dims] == [("model",), ("data",)]


def test_a_drawing_dropped_half_way_leaves_the_scene_as_it_was(panel_for):
    session, panel = panel_for("example:transformer?layers=2")
    view, scene = panel.view, panel.view.graph_scene
    before = picture(scene)
    staged = StagedDrawing(scene.refresh_badge, unfolded_layout(session, view), view.style_)
    steps = staged.steps(0.0)
    for _ in range(5):
        next(steps)
    assert not staged.done and staged.nodes
    assert picture(scene) == before
    assert all(item.scene() is None for item in staged.items)
