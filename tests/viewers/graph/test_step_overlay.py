"""The step overlay: badges at a step, the step's edges and op, rings on changed badges."""

from PySide6.QtCore import Qt

from shardscope.backend.propagation.timeline import Step
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.graph.step_overlay import StepOverlay


def _items(view, tag):
    return [i for i in view.scene().items() if i.data(0) == tag]


def test_a_step_rings_its_op_and_draws_its_edges_in_the_axis_colour(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    graph = session.graph
    overlay = StepOverlay(view)
    x = graph.value_by_name("x").id
    (dot,) = [op.id for op in graph.ops if x in op.operands and op.name == "stablehlo.dot_general"]
    out = graph.ops[dot].results[0]
    step = Step(0, dot, "stablehlo.dot_general", "data", "operand-0", ("result-0",), (out,), x)
    overlay.show_steps([step])
    node = view.layout_.node_of_op[dot]
    assert overlay.marked_nodes == [node]
    (ring,) = _items(view, "step-ring")
    assert ring.sceneBoundingRect().contains(view.nodes[node].sceneBoundingRect().center())
    flows = _items(view, "step-flow")
    # the edge that brought x in and the edge that carries the result out
    assert len(flows) == 2
    data = ring.pen().color()
    assert all(f.pen().color() == data for f in flows)
    # a second axis at the same step gets a second ring of its own colour, outside
    step2 = Step(0, dot, "stablehlo.dot_general", "model", "operand-1", ("result-0",), (out,))
    overlay.show_steps([step, step2])
    rings = _items(view, "step-ring")
    assert len(rings) == 2 and rings[0].pen().color() != rings[1].pen().color()
    overlay.show_steps([])
    assert _items(view, "step-ring") == [] and _items(view, "step-flow") == []


def test_the_overlay_survives_a_rebuild_and_lights_the_folded_scope(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    graph = session.graph
    overlay = StepOverlay(view)
    (dot,) = [
        op.id for op in graph.ops if op.scope == "layer2" and op.name == "stablehlo.dot_general"
    ]
    out = graph.ops[dot].results[0]
    overlay.show_steps(
        [Step(5, dot, "stablehlo.dot_general", "data", "operand-0", ("result-0",), (out,))]
    )
    view.collapse_all()
    node = overlay.marked_nodes[0]
    assert view.nodes[node].node.kind == "scope" and view.nodes[node].node.scope == "layer2"
    assert len(_items(view, "step-ring")) == 1


def test_a_step_inside_a_callee_shows_on_the_call(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    graph = session.graph
    overlay = StepOverlay(view)
    (call,) = [op.id for op in graph.ops if op.callee == "relu"]
    (inner,) = [
        op.id for op in graph.ops if op.function == "relu" and op.name == "stablehlo.maximum"
    ]
    assert overlay.op_holder(inner) == call
    step = Step(4, inner, "stablehlo.maximum", "data", "operand-0", ("result-0",), ())
    overlay.show_steps([step])
    assert overlay.marked_nodes == [view.layout_.node_of_op[call]]


def test_spec_override_and_changed_rings(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    overlay = StepOverlay(view)
    x = session.graph.value_by_name("x").id
    shown = view.badge_text(x)
    assert shown == session.spec_text(x) != "[model, _]"
    overlay.set_spec_override(lambda vid, spec, origin: (Spec.of("model", None), "propagated"), [x])
    assert view.badge_text(x) == "[model, _]"
    overlay.set_changed([x])
    (ring,) = _items(view, "changed")
    assert ring.sceneBoundingRect().contains(view.badge_for(x).sceneBoundingRect())
    view.collapse_all()  # rebuilt: the override and the ring stay
    assert view.badge_text(x) == "[model, _]"
    assert len(_items(view, "changed")) == 1
    overlay.set_spec_override(None, None)
    overlay.set_changed([])
    assert view.badge_text(x) == shown and _items(view, "changed") == []
    overlay.close()


def test_a_step_inside_a_loop_body_shows_on_the_loop_and_inside_it(panel_for):
    session, panel = panel_for("example:scan")
    view = panel.view
    graph = session.graph
    overlay = StepOverlay(view)
    (loop,) = [op for op in graph.ops if op.name == "stablehlo.while"]
    (inner,) = [i for i in loop.regions[-1].ops if graph.ops[i].name == "stablehlo.add"]
    step = Step(2, inner, graph.ops[inner].name, "data", "operand-0", ("result-0",), ())
    overlay.show_steps([step])
    assert overlay.marked_nodes == [view.layout_.node_of_op[loop.id]]
    # entering the body: the op itself is marked
    assert view.enter_op(loop.id, len(loop.regions) - 1)
    assert overlay.marked_nodes == [view.layout_.node_of_op[inner]]
    assert view.nodes[overlay.marked_nodes[0]].node.op == inner


def test_overlay_items_never_take_a_click_from_the_node_under_them(panel_for, qtbot):
    session, panel = panel_for("example:mlp")
    view = panel.view
    overlay = StepOverlay(view)
    view.collapse_all()
    scope = next(i for i in view.nodes if i.node.kind == "scope")
    op = next(o.id for o in session.graph.ops if (o.scope or "").startswith(scope.node.scope))
    overlay.show_steps([Step(0, op, "x", "data", "operand-0", ("result-0",), ())])
    assert overlay.marked_nodes == [view.nodes.index(scope)]
    view.centerOn(scope)
    pos = view.mapFromScene(scope.sceneBoundingRect().center())
    assert view.itemAt(pos) is scope
    # double-click on the ringed scope still unfolds it
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert scope.node.scope in view.expanded()


def test_a_flow_is_drawn_in_short_pieces_along_its_edge(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    graph = session.graph
    overlay = StepOverlay(view)
    x = graph.value_by_name("x").id
    (dot,) = [op.id for op in graph.ops if x in op.operands and op.name == "stablehlo.dot_general"]
    out = graph.ops[dot].results[0]
    overlay.show_steps(
        [Step(0, dot, "stablehlo.dot_general", "data", "operand-0", ("result-0",), (out,), x)]
    )
    for flow in _items(view, "step-flow"):
        assert flow.boundingRect().isEmpty() and flow.pieces
        path = flow.path()
        # the pieces follow the curve from end to end ...
        assert flow.pieces[0].path().pointAtPercent(0) == path.pointAtPercent(0)
        assert flow.pieces[-1].path().pointAtPercent(1) == path.pointAtPercent(1)
        assert all(p.pen().color() == flow.pen().color() for p in flow.pieces)
        # ... and what a repaint covers is no more than the curve's box
        covered = sum(p.boundingRect().width() * p.boundingRect().height() for p in flow.pieces)
        box = path.controlPointRect()
        assert covered <= box.width() * box.height() + len(flow.pieces) * 400
    overlay.show_steps([])
    assert not [i for i in view.scene().items() if i.data(0) == "step-flow"]


def test_closing_an_overlay_twice_is_quiet(panel_for, recwarn):
    session, panel = panel_for("example:mlp")
    overlay = StepOverlay(panel.view)
    overlay.close()
    overlay.close()
    assert not [w for w in recwarn if "disconnect" in str(w.message)]


def test_flows_follow_the_view_as_it_scrolls(panel_for):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    view.expand_all()
    overlay = StepOverlay(view)
    graph = session.graph
    # the step on the op whose flows run farthest: an edge longer than the view
    longest = max(view.graph_scene.edges, key=lambda e: e.path().length())
    edge = longest.edge
    op = view.layout_.nodes[edge.dst].op
    assert op is not None
    value = edge.values[0]
    step = Step(0, op, graph.ops[op].name, "data", "operand-0", ("result-0",), (value,), value)
    view.centerOn(longest.path().pointAtPercent(0))
    overlay.show_steps([step])
    (flow,) = [f for f in overlay.flow_items if f.path() == longest.path()]
    made = len(flow.pieces)
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert made and all(
        p.sceneBoundingRect().intersects(
            visible.adjusted(
                -3 * visible.width(),
                -3 * visible.height(),
                3 * visible.width(),
                3 * visible.height(),
            )
        )
        for p in flow.pieces
    )
    # scrolling to the other end draws the flow there too
    view.centerOn(longest.path().pointAtPercent(1))
    assert len(flow.pieces) > made
    far = view.mapToScene(view.viewport().rect()).boundingRect()
    assert any(p.sceneBoundingRect().intersects(far) for p in flow.pieces)
    # a picture of the whole drawing has the whole flow
    whole = StepOverlay(view, whole=True)
    whole.show_steps([step])
    (all_of_it,) = [f for f in whole.flow_items if f.path() == longest.path()]
    assert abs(sum(p.path().length() for p in all_of_it.pieces) - longest.path().length()) < 2
    whole.close()
    overlay.close()


def test_many_changed_badges_show_on_screen_first_and_the_rest_in_slices(
    panel_for, qtbot, monkeypatch
):
    from shardscope.viewers.graph import step_overlay

    monkeypatch.setattr(step_overlay, "AT_ONCE", 5)
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    view.expand_all()
    overlay = StepOverlay(view)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    on = [
        b for b in view.badges if b.value_id is not None and shown.contains(b.sceneBoundingRect())
    ]
    off = [
        b
        for b in view.badges
        if b.value_id is not None and not b.sceneBoundingRect().intersects(shown)
    ]
    assert on and off
    everything = [b.value_id for b in view.badges if b.value_id is not None]
    before = {b.value_id: view.badge_text(b.value_id) for b in off}

    def override(vid, spec, origin):
        return Spec.of(*["model"] * session.graph.values[vid].rank), "propagated"

    overlay.set_spec_override(override, everything)
    # what the user sees changed at once, the rest waits for the event loop
    ranked = [b for b in on if session.graph.values[b.value_id].rank]
    assert ranked and all("model" in view.badge_text(b.value_id) for b in ranked)
    waiting = [b for b in off if session.graph.values[b.value_id].rank]
    assert waiting and not overlay.settled
    assert any("model" not in view.badge_text(b.value_id) for b in waiting)
    # scrolling to a stale badge shows it at the step as soon as it is on screen
    target = next(b for b in waiting if "model" not in view.badge_text(b.value_id))
    view.centerOn(target)
    assert "model" in view.badge_text(target.value_id)
    qtbot.waitUntil(lambda: overlay.settled, timeout=10_000)
    assert all("model" in view.badge_text(b.value_id) for b in waiting)
    # back to the session's own shardings: also on screen first, settle finishes it
    overlay.set_spec_override(None, None)
    overlay.settle()
    assert overlay.settled
    assert all(view.badge_text(b.value_id) == before[b.value_id] for b in waiting)
    overlay.close()
