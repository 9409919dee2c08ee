"""The graph's drawing: scope regions, badges per value, and badges following specs."""

import pytest
from PySide6.QtCore import QPointF

from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.graph.items import ScopeBoxItem


@pytest.mark.parametrize("source", ["example:mlp", "example:attention"])
def test_every_expanded_scope_gets_a_region_holding_just_its_nodes(panel_for, source):
    session, panel = panel_for(source)
    view = panel.view
    layout = view.layout_
    regions = {i.box.path: i for i in view.scene().items() if isinstance(i, ScopeBoxItem)}
    assert set(regions) == {b.path for b in layout.boxes} and regions
    for path, region in regions.items():
        members = set(region.box.nodes)
        for k, node in enumerate(layout.nodes):
            inside = region._outline.contains(QPointF(node.x, node.y))
            assert inside == (k in members), (path, node.label, node.scope)


def test_badges_by_value_follow_the_session(panel_for):
    session, panel = panel_for("example:mlp")
    scene = panel.view.graph_scene
    x = session.graph.value_by_name("x").id
    (badge,) = scene.badges_of(x)
    assert badge in scene.badges and badge.value_id == x
    assert "x  f32[32x64]" in badge.toolTip()
    session.set_spec(x, Spec.of("data", None))
    assert badge.dims == [("data",), ()]
    assert "data,_  (user)" in badge.toolTip()
    assert scene.badges_of(-1) == []


def test_clear_items_leaves_an_empty_scene(panel_for):
    session, panel = panel_for("example:mlp")
    scene = panel.view.graph_scene
    assert scene.nodes and scene.edges and scene.badges
    scene.clear_items()
    assert (scene.nodes, scene.edges, scene.badges) == ([], [], [])
    assert scene.items() == []


def test_each_drawn_frame_is_announced(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    with qtbot.waitSignal(panel.view.graph_scene.drawn, timeout=1000):
        panel.view.collapse_all()


def test_a_staged_drawing_goes_in_a_slice_at_a_time_and_is_announced_once(panel_for, qtbot):
    from shardscope.backend.program.layout import Frame, all_scopes, build_layout

    session, panel = panel_for("example:transformer?layers=2")
    view, scene = panel.view, panel.view.graph_scene
    graph = session.graph
    frame = Frame(graph.main)
    layout = build_layout(graph, frame, frozenset(all_scopes(graph, view.index, frame)))
    staged = scene.stage(layout, view.style_).build()
    drawn = []
    scene.drawn.connect(lambda: drawn.append(len(scene.items())))
    steps = scene.showing(staged, 0.0)
    assert next(steps) > 0
    assert scene.nodes is staged.nodes and not drawn  # the new lists, not announced yet
    rest = list(steps)
    assert len(rest) > 2 and rest[-1] == -1
    assert drawn and drawn[0] >= len(staged.items)
    assert scene.sceneRect().contains(staged.bounds)


def test_a_value_xla_compiled_otherwise_says_so_on_its_badge_once_compiled(panel_for):
    from shardscope.backend.analysis.analyse import analyse
    from tests.support.compile_oracle import loaded
    from tests.support.inputs import PROGRAMS

    source = str(PROGRAMS / "explain_rms_norm.py")
    session, panel = panel_for(source)
    panel.view.expand_all()
    analysis = analyse(loaded(source))
    (square,) = [v for v in session.graph.values if v.display_name.endswith("square %0")]
    (badge,) = panel.view.graph_scene.badges_of(square.id)
    session.set_propagation(analysis.propagation)
    assert "compiled:" not in badge.toolTip()
    session.set_compiled(analysis.propagation, analysis.compile)
    # XLA squared x where it lies, sharded over tensor; propagation left it whole there.
    assert "data,_,tensor  (compiled: XLA computed it so" in badge.toolTip()
    assert "data,_,_" in badge.toolTip()
