"""Marks on the graph: conflicts on ops and folded scopes, collectives, GSPMD differences,
open dims and priorities; they follow the session and the view's rebuilds."""

from PySide6.QtGui import QColor, QImage, QPainter

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.gspmd.compare import Difference
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import DimSpec, Spec
from shardscope.backend.units import bytes_text
from shardscope.viewers.graph.graph_panel import GraphPanel
from shardscope.viewers.graph.markers import (
    CONFLICT_COLOR,
    GSPMD_COLOR,
    CollectiveMarkItem,
    ConflictMarkItem,
    GraphMarkers,
    GspmdMarkItem,
    SpecNotesItem,
    spec_notes,
)
from tests.support.compile_oracle import loaded, propagated


def marked(qtbot, source: str, *, propagate: bool = True):
    session = Session()
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    session.set_program(loaded(source))
    markers = GraphMarkers(panel.view)
    if propagate:
        session.set_propagation(propagated(source))
    return session, panel.view, markers


def node_named(view, label):
    (item,) = [n for n in view.nodes if n.node.label == label]
    return item


def marks_on(item, kind):
    return [c for c in item.childItems() if isinstance(c, kind)]


def test_the_add_where_data_meets_model_carries_the_conflict_mark(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    add = node_named(view, "add")
    (mark,) = marks_on(add, ConflictMarkItem)
    assert mark.text == "!" and not mark.folded
    assert (
        "stablehlo.add (op 1): factor i of size 16: data vs model, kept [_] by longest common "
        "prefix" in mark.toolTip()
    )
    assert set(markers.conflicted_nodes().values()) == {add}
    for other in ("sine", "x", "y", "return"):
        assert not marks_on(node_named(view, other), ConflictMarkItem)


def test_collectives_sit_on_the_op_they_serve_and_on_the_return(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    (on_add,) = marks_on(node_named(view, "add"), CollectiveMarkItem)
    assert on_add.text == "⇄ AS·CP"
    assert "collective_permute over data on y → [data, _]: 512 B per device" in on_add.toolTip()
    (on_return,) = marks_on(node_named(view, "return"), CollectiveMarkItem)
    assert on_return.text == "⇄ AG"
    assert "all_gather over data on result[0] → [_, _]: 1.5 KiB per device" in on_return.toolTip()


def test_compiled_collectives_replace_only_the_collective_tags(qtbot):
    session, view, markers = marked(qtbot, "example:conflict", propagate=False)
    compiled = analyse(loaded("example:conflict"))
    waiting = compiled.propagation
    session.set_propagation(waiting)
    nodes = list(view.nodes)
    (conflict,) = marks_on(node_named(view, "add"), ConflictMarkItem)
    (predicted,) = marks_on(node_named(view, "return"), CollectiveMarkItem)
    assert not predicted.compiled and "Shardy predicts" in predicted.toolTip()
    session.set_compiled(waiting, compiled.compile)
    # The same drawing and conflict mark: only the tags changed.
    assert view.nodes == nodes
    assert marks_on(node_named(view, "add"), ConflictMarkItem) == [conflict]
    assert not marks_on(node_named(view, "return"), CollectiveMarkItem)
    (tag,) = marks_on(node_named(view, "add"), CollectiveMarkItem)
    n = len(compiled.compiled_collectives)
    assert tag.compiled and tag.text == f"⇄ AG×{n}" and len(tag.collectives) == n
    assert "in the compiled program (XLA)" in tag.toolTip()
    for c in compiled.compiled_collectives:
        assert f"{bytes_text(c.bytes)} per device" in tag.toolTip()
        assert c.cause.text in tag.toolTip()
    # Folding keeps them on the scope that holds the op.
    view.collapse_all()
    assert all(m.compiled for m in markers.collective_marks.values())


def test_a_folded_scope_counts_the_conflicts_of_its_ops(qtbot):
    session, view, markers = marked(qtbot, "example:matmul6")
    result = session.propagation
    assert len(result.conflicts) == 2
    view.collapse_all()
    marks = [(i.node, m) for i in view.nodes for m in marks_on(i, ConflictMarkItem)]
    assert marks and all(node.kind == "scope" and mark.folded for node, mark in marks)
    assert sum(len(mark.conflicts) for _, mark in marks) == 2
    # Unfolding puts the marks back on the ops themselves.
    for node, _ in marks:
        view.set_expanded(node.scope, True)
    ops = {view.nodes[n].node.op for n in markers.conflict_marks}
    assert ops == {c.op for c in result.conflicts}


def test_marks_go_when_propagation_is_stale_and_come_back_with_a_result(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    add = node_named(view, "add")
    assert marks_on(add, ConflictMarkItem)
    x = session.graph.value_by_name("x").id
    session.set_spec(x, Spec.of(None, None))
    assert not marks_on(node_named(view, "add"), ConflictMarkItem)
    assert not markers.collective_marks
    session.set_spec(x, Spec.of("data", None))
    session.set_propagation(propagated("example:conflict"))
    assert marks_on(node_named(view, "add"), ConflictMarkItem)


def test_gspmd_differences_outline_the_badge_with_both_specs(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    out = session.graph.functions[session.graph.main].results[0]
    diff = Difference(
        out,
        "result[0]",
        "result[0]",
        "result",
        [[], []],
        "{replicated}",
        [["data"], []],
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
    )
    markers.set_gspmd([diff])
    (badge,) = view.graph_scene.badges_of(out)
    (mark,) = marks_on(badge, GspmdMarkItem)
    assert (mark.shardy, mark.gspmd, mark.text) == ("[_, _]", "[data, _]", "GSPMD [data, _]")
    assert markers.gspmd_values() == {out}
    # They survive a rebuild of the drawing, and go when the comparison is off.
    view.collapse_all()
    (badge,) = view.graph_scene.badges_of(out)
    assert marks_on(badge, GspmdMarkItem)
    markers.set_gspmd(None)
    assert not marks_on(badge, GspmdMarkItem) and markers.gspmd_values() == set()


def test_open_dims_and_priorities_of_user_specs_get_notes(qtbot):
    session, view, markers = marked(qtbot, "example:conflict", propagate=False)
    x = session.graph.value_by_name("x").id
    session.set_spec(x, Spec((DimSpec(("data",), priority=1), DimSpec((), is_open=True))))
    (badge,) = view.graph_scene.badges_of(x)
    (notes,) = marks_on(badge, SpecNotesItem)
    assert notes.notes == {0: "p1", 1: "?"}
    session.set_spec(x, Spec.of("data", None))
    assert not marks_on(badge, SpecNotesItem)


def test_no_marks_before_propagation(qtbot):
    session, view, markers = marked(qtbot, "example:conflict", propagate=False)
    assert not markers.conflict_marks and not markers.collective_marks


def test_the_conflict_mark_is_drawn_in_red_around_the_op(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    scene = view.graph_scene
    add = node_named(view, "add")
    rect = add.mapRectToScene(add.childrenBoundingRect()).adjusted(-4, -4, 4, 4)
    image = QImage(int(rect.width()) * 2, int(rect.height()) * 2, QImage.Format.Format_RGB32)
    image.fill(QColor("#FFFFFF"))
    painter = QPainter(image)
    scene.render(painter, source=rect)
    painter.end()
    red = QColor(CONFLICT_COLOR).rgb() & 0xFFFFFF
    found = {
        image.pixel(x, y) & 0xFFFFFF for x in range(image.width()) for y in range(image.height())
    }
    assert red in found
    assert QColor(GSPMD_COLOR).rgb() & 0xFFFFFF not in found


def test_helpers_word_bytes_and_spec_notes():
    assert bytes_text(512) == "512 B" and bytes_text(1536) == "1.5 KiB"
    assert bytes_text(3 * 1024 * 1024) == "3.0 MiB"
    spec = Spec((DimSpec(("a",), is_open=True, priority=0), DimSpec(("b",))))
    assert spec_notes(spec) == {0: "?p0"}


def test_the_inspected_tensor_keeps_its_ring_through_folding_and_a_new_program(qtbot):
    from shardscope.viewers.graph.markers import SelectedMarkItem

    session, view, markers = marked(qtbot, "example:mlp", propagate=False)
    graph = session.graph
    (dot,) = [op for op in graph.ops if op.scope == "layer2" and op.short_name == "dot_general"]
    out = dot.results[0]

    def rings():
        return [
            (badge, m)
            for badge in view.graph_scene.badges_of(out)
            for m in badge.childItems()
            if isinstance(m, SelectedMarkItem)
        ]

    view.expand_all()
    markers.set_inspected(out)
    ((badge, ring),) = rings()
    assert ring.color == view.style_.theme.selected and ring.sceneBoundingRect().contains(
        badge.sceneBoundingRect()
    )
    view.collapse_all()  # every item drawn anew
    view.expand_all()
    assert len(rings()) == 1 and rings()[0][0] is not badge
    session.set_program(loaded("example:conflict"))  # another program: nothing inspected
    assert markers.inspected is None and not markers.selected_marks


def _result_difference(session) -> Difference:
    out = session.graph.functions[session.graph.main].results[0]
    return Difference(
        out, "result[0]", "result[0]", "result", [[], []], "{replicated}", [["data"], []], "x"
    )


def _labels(badge) -> list:
    return [m.mapRectToScene(m._label()) for m in marks_on(badge, GspmdMarkItem)]


def test_two_marks_on_one_badge_write_on_two_lines_inside_the_drawing(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    diff = _result_difference(session)
    markers.set_gspmd([diff])
    (badge,) = view.graph_scene.badges_of(diff.id)
    # a second mark on the same badge (a side-by-side pane's) goes one line lower
    GspmdMarkItem(badge, "[data, _]", "[_, _]", view.style_, label="Shardy")
    first, second = _labels(badge)
    assert not first.intersects(second) and second.top() > first.top()
    # the toggle's marks drawn again keep clear of the one that stayed
    markers.refresh()
    first, second = _labels(badge)
    assert not first.intersects(second)
    scene_rect = view.graph_scene.sceneRect()
    assert all(scene_rect.contains(label) for label in _labels(badge))


def test_a_mark_near_the_drawings_right_edge_writes_left_of_its_badge(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    scene_rect = view.graph_scene.sceneRect()
    badge = max(view.badges, key=lambda b: b.sceneBoundingRect().right())
    room_left = badge.sceneBoundingRect().left() - scene_rect.left()
    sides = set()
    for n in range(1, 12):
        mark = GspmdMarkItem(badge, "[_, _]", "[" + "data, " * n + "_]", view.style_, label="now")
        label = mark.mapRectToScene(mark._label())
        if label.width() < room_left - 8:
            # it fits left of the badge: it never runs past the drawing's edge
            assert scene_rect.contains(label), n
        sides.add("left" if label.right() < badge.sceneBoundingRect().left() else "right")
        view.graph_scene.removeItem(mark)
    assert sides == {"left", "right"}


def test_hidden_gspmd_differences_are_kept_but_not_marked(qtbot):
    session, view, markers = marked(qtbot, "example:conflict")
    diff = _result_difference(session)
    markers.set_gspmd([diff])
    markers.hide_gspmd(True)
    (badge,) = view.graph_scene.badges_of(diff.id)
    assert not marks_on(badge, GspmdMarkItem) and markers.gspmd_values() == set()
    view.collapse_all()  # a new drawing keeps them hidden
    (badge,) = view.graph_scene.badges_of(diff.id)
    assert not marks_on(badge, GspmdMarkItem)
    markers.hide_gspmd(False)
    assert markers.gspmd_values() == {diff.id}


def test_a_mark_writes_its_spec_clear_of_the_next_badge(qtbot):
    session, view, markers = marked(qtbot, "example:mlp")
    rects = {b: b.sceneBoundingRect() for b in view.badges}
    # two badges on one row, closer than a written spec is wide (layer2's add operands)
    pairs = [
        (a, b)
        for a, ra in rects.items()
        for b, rb in rects.items()
        if a is not b
        and abs(ra.center().y() - rb.center().y()) < 2
        and 0 < rb.left() - ra.right() < 80
    ]
    assert pairs
    for a, b in pairs:
        mark = GspmdMarkItem(a, "[data, _]", "[data, model]", view.style_, label="now")
        label = mark.mapRectToScene(mark._label())
        assert not label.intersects(rects[b])
        assert view.graph_scene.sceneRect().contains(label)
        view.graph_scene.removeItem(mark)
