"""Side by side, as a user meets it: View ▸ Side by side splits the graph in two
synchronised panes, each showing now, before the last edit, Shardy or GSPMD, with the
values on which they differ marked; turning it off gives back the single graph."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSplitter, QToolButton

from shardscope.viewers.common.colors import axis_color
from shardscope.viewers.common.mime import axis_mime_data
from shardscope.viewers.graph.markers import (
    CONFLICT_COLOR,
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
)
from tests.support.qt_events import drop


def add_result(window) -> int:
    (add,) = [op for op in window.session.graph.ops if op.short_name == "add"]
    return add.results[0]


def diff_marks(view, value_id):
    return [
        c
        for badge in view.graph_scene.badges_of(value_id)
        for c in badge.childItems()
        if isinstance(c, GspmdMarkItem)
    ]


def open_side_by_side(window, pick, find_action):
    pick(window, "&View", "Side by si&de")
    assert find_action(window, "&View", "Side by si&de").isChecked()
    panes = window.panes
    assert isinstance(window.centralWidget(), QSplitter)
    assert window.panes.left.panel is window.graph_panel
    return panes


def test_side_by_side_shows_shardy_against_gspmd_and_marks_the_adds_result(
    make_window, qtbot, pick, find_action
):
    window = make_window("example:conflict")
    specs = dict(window.session.specs)
    panes = open_side_by_side(window, pick, find_action)
    assert panes.modes == ("shardy", "gspmd")  # no edit yet
    left, right = panes.left.view, panes.right.view
    assert right.isVisible() and right is not window.graph
    qtbot.waitUntil(lambda: not window.gspmd.comparing, timeout=120_000)
    assert panes.right.header.note.text() == ""
    out = add_result(window)
    assert set(panes.found) == {out}
    assert left.badge_text(out) == "[_, _]"  # Shardy leaves it unsharded
    assert right.badge_text(out) == "[data, _]"  # GSPMD shards it on data
    (mark,) = diff_marks(right, out)
    assert mark.text == "Shardy [_, _]"
    (mark,) = diff_marks(left, out)
    assert mark.text == "GSPMD [data, _]"
    # The GSPMD dock shows the comparison the panes show, and where it is marked; the
    # graph's own GSPMD marks follow the toggle only.
    dock = window.gspmd.view
    assert dock.state == "done" and dock.status.text() == (
        "GSPMD shards 1 value differently from Shardy (marked in both side-by-side panes)."
    )
    assert not find_action(window, "&View", "Compare with &GSPMD").isChecked()
    assert window.markers.gspmd_values() == set()
    pick(window, "&View", "Side by si&de")
    assert dock.state == "off"
    assert not find_action(window, "&View", "Side by si&de").isChecked()
    assert window.centralWidget() is window.graph_panel and window.panes.right is None
    assert window.graph.badge_text(out) == "[_, _]" and not diff_marks(window.graph, out)
    assert window.graph.graph_scene.mode_override is None
    assert dict(window.session.specs) == specs


def test_after_an_edit_before_and_now_mark_the_changed_badges(
    make_window, qtbot, pick, find_action, drop_axis
):
    window = make_window("example:mlp")
    graph = window.session.graph
    b2 = graph.value_by_name("params['b2']").id
    before = {v.id: window.graph.badge_text(v.id) for v in graph.values}
    count = window.propagation.count
    drop_axis(window, b2, 0, "data")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    changed = window.timeline.changed
    assert changed
    panes = open_side_by_side(window, pick, find_action)
    assert panes.modes == ("before", "now")
    left, right = panes.left.view, panes.right.view
    assert set(panes.found) == set(changed)
    for vid in changed:
        if left.badge_for(vid) is None:
            continue
        assert left.badge_text(vid) == before[vid]
        assert right.badge_text(vid) != left.badge_text(vid)
        assert [m.text.split()[0] for m in diff_marks(right, vid)] == ["before"] * len(
            right.graph_scene.badges_of(vid)
        )
    assert right.badge_text(b2).startswith("[data")
    # the left pane shows what was before; undo brings now back to it
    qtbot.keyClick(window.graph, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: right.badge_text(b2) == before[b2], timeout=60_000)


def test_each_pane_chooses_what_it_shows(make_window, qtbot, pick, find_action):
    window = make_window("example:conflict")
    panes = open_side_by_side(window, pick, find_action)
    qtbot.waitUntil(lambda: not window.gspmd.comparing, timeout=120_000)
    panes.left.header.combo.setCurrentIndex(panes.left.header.combo.findData("before"))
    assert panes.modes == ("before", "gspmd")
    assert "no edit" in panes.left.header.note.text()
    panes.right.header.combo.setCurrentIndex(panes.right.header.combo.findData("now"))
    assert panes.modes == ("before", "now") and panes.found == {}
    assert not diff_marks(panes.right.view, add_result(window))
    panes.left.header.combo.setCurrentIndex(panes.left.header.combo.findData("gspmd"))
    assert set(panes.found) == {add_result(window)}
    assert panes.left.view.badge_text(add_result(window)) == "[data, _]"


def test_the_panes_scroll_zoom_select_and_fold_together(make_window, qtbot, pick, find_action):
    window = make_window("example:transformer?layers=2", propagate=False)
    panes = open_side_by_side(window, pick, find_action)
    left, right = panes.left.view, panes.right.view
    qtbot.waitUntil(lambda: left.state_key() == right.state_key())
    right.zoom(1.6)
    assert left.transform().m11() == right.transform().m11()
    bar = right.verticalScrollBar()
    bar.setValue(bar.value() + 250)

    def centre(view):
        return view.mapToScene(view.viewport().rect().center())

    qtbot.waitUntil(lambda: (centre(left) - centre(right)).manhattanLength() < 2, timeout=2000)
    scope = next(n for n in right.nodes if n.node.kind == "scope")
    right.centerOn(scope)
    qtbot.mouseDClick(
        right.viewport(), Qt.MouseButton.LeftButton, pos=right.mapFromScene(scope.pos())
    )
    assert scope.node.scope in left.expanded()
    assert window.session.view["expanded"][window.session.graph.main]  # kept by the window
    badge = next(b for b in right.badges if b.value_id is not None)
    right.centerOn(badge)
    qtbot.mouseClick(
        right.viewport(),
        Qt.MouseButton.LeftButton,
        pos=right.mapFromScene(badge.sceneBoundingRect().center()),
    )
    (chosen,) = left.scene().selectedItems()
    assert chosen.value_id == badge.value_id
    assert window.selected_value == badge.value_id  # the inspector shows it


def test_a_drop_on_the_right_pane_is_an_undoable_edit(make_window, qtbot, pick, find_action):
    window = make_window("example:mlp")
    panes = open_side_by_side(window, pick, find_action)
    right = panes.right.view
    assert "undoable" in panes.right.toolTip()
    b2 = window.session.graph.value_by_name("params['b2']").id
    badge = right.badge_for(b2)
    right.centerOn(badge)
    mime = axis_mime_data("data")
    drop(right, right.mapFromScene(badge.chip_scene_center(0)), mime)
    assert window.session.spec(b2) is not None
    assert window.qundo.count() == 1
    window.qundo.undo()
    assert window.session.spec(b2) is None


def test_a_failed_gspmd_comparison_leaves_the_pane_on_now(
    make_window, qtbot, pick, find_action, monkeypatch
):
    calls = []

    def crash(program, result, **kwargs):
        calls.append(result)
        raise RuntimeError("the compiler aborted")

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", crash)
    window = make_window("example:conflict")
    panes = open_side_by_side(window, pick, find_action)
    qtbot.waitUntil(lambda: not window.gspmd.comparing, timeout=30_000)
    note = panes.right.header.note.text()
    assert note.startswith("the GSPMD comparison failed: ") and "the compiler aborted" in note
    assert note.endswith("; showing now") and "see Messages" not in note
    assert panes.found == {}
    assert panes.right.view.badge_text(add_result(window)) == "[_, _]"
    assert any("the compiler aborted" in text for text in window.messages.messages("error"))
    qtbot.wait(200)
    assert len(calls) == 1  # not tried again and again for the same result


def test_a_program_opened_while_side_by_side_shows_in_both_panes(
    make_window, qtbot, pick, find_action
):
    window = make_window("example:conflict")
    panes = open_side_by_side(window, pick, find_action)
    count = window.propagation.count
    window.open_program("example:transformer?layers=2")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    left, right = panes.left.view, panes.right.view
    assert left.state_key() == right.state_key()
    assert len(right.nodes) == len(left.nodes) > 10
    assert panes.modes == ("shardy", "gspmd")  # the panes keep their modes


def conflict_marks(view):
    return [i for i in view.graph_scene.items() if isinstance(i, ConflictMarkItem)]


def collective_tags(view):
    return [i for i in view.graph_scene.items() if isinstance(i, CollectiveMarkItem)]


def choose(pane, mode):
    pane.header.combo.setCurrentIndex(pane.header.combo.findData(mode))


def test_the_left_pane_marks_conflicts_only_where_it_shows_their_result(
    make_window, qtbot, pick, find_action
):
    window = make_window("example:conflict")
    assert window.session.propagation.conflicts
    assert conflict_marks(window.graph)
    panes = open_side_by_side(window, pick, find_action)
    qtbot.waitUntil(lambda: not window.gspmd.comparing, timeout=120_000)
    left = panes.left.view
    assert panes.modes == ("shardy", "gspmd")
    # Shardy's final shardings are the current result's: its conflicts are marked
    assert conflict_marks(left) and panes.left.header.toolTip() == ""
    choose(panes.left, "gspmd")
    # GSPMD's shardings carry GSPMD's compiled collectives, not Shardy's conflicts
    assert not conflict_marks(left)
    assert [tag.text for tag in collective_tags(left)] == ["⇄ CP"]
    assert panes.left.header.toolTip().startswith(
        "Collective tags here are GSPMD's compiled collectives: the compile whose"
    )
    choose(panes.left, "now")
    assert conflict_marks(left) and panes.left.header.toolTip() == ""
    choose(panes.left, "gspmd")
    pick(window, "&View", "Side by si&de")  # off: the single graph has its marks again
    assert conflict_marks(window.graph)


def test_the_left_pane_showing_before_the_edit_hides_the_rings_of_the_new_result(
    make_window, qtbot, pick, find_action, drop_axis
):
    window = make_window("example:mlp")
    b2 = window.session.graph.value_by_name("params['b2']").id
    count = window.propagation.count
    drop_axis(window, b2, 0, "data")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    overlay = window.timeline.overlay
    assert overlay.change_items  # the single graph rings what the edit changed
    panes = open_side_by_side(window, pick, find_action)
    assert panes.modes == ("before", "now")
    assert not overlay.change_items
    assert not [i for i in window.graph.graph_scene.items() if i.data(0) == "changed"]
    tip = panes.left.header.toolTip()
    assert "before the last edit" in tip and "rings" in tip
    # the collective tags are the previous propagation's, kept by the timeline
    before, now = window.timeline.before_result, window.session.propagation
    assert before is not None and before is not now and before.collectives

    def tagged(view):
        return [id(c) for tag in collective_tags(view) for c in tag.collectives]

    left = panes.left.view
    assert tagged(left) and set(tagged(left)) <= {id(c) for c in before.collectives}
    choose(panes.left, "now")
    assert overlay.change_items and panes.left.header.toolTip() == ""
    assert set(tagged(left)) <= {id(c) for c in now.collectives}
    assert not set(tagged(left)) & {id(c) for c in before.collectives}
    choose(panes.left, "before")
    assert not overlay.change_items
    pick(window, "&View", "Side by si&de")
    assert overlay.change_items


def test_the_now_pane_draws_the_conflict_bang_and_collective_tags_of_the_single_view(
    make_window, qtbot, drop_axis
):
    window = make_window("example:conflict")
    x = window.session.graph.value_by_name("x").id
    count = window.propagation.count
    drop_axis(window, x, 1, "model")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    conflicts = window.session.propagation.conflicts
    assert conflicts
    single = {n.node.key for n in window.markers.conflicted_nodes().values()}
    single_tags = sorted(tag.text for tag in collective_tags(window.graph))
    changed = set(window.timeline.overlay.changed_values)
    assert single and single_tags and changed
    qtbot.keyClick(
        window.graph,
        Qt.Key.Key_D,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    panes = window.panes
    assert panes.on and panes.modes == ("before", "now")
    right = panes.right.view
    qtbot.waitUntil(lambda: bool(conflict_marks(right)), timeout=10_000)
    marks = conflict_marks(right)
    assert {m.parentItem().node.key for m in marks} == single
    assert [m.text for m in marks] == ["!"] * len(marks) and all(m.isVisible() for m in marks)
    assert sorted(tag.text for tag in collective_tags(right)) == single_tags
    rings = [i for i in right.graph_scene.items() if i.data(0) == "changed"]
    assert rings and len(rings) >= len([v for v in changed if right.badge_for(v) is not None])
    # the rendered pane shows the red outline of the conflict, zoomed in on it as a user
    # would to read it (at a whole window's fit its thin outline is blended)
    right.zoom(1 / right.transform().m11())
    right.centerOn(marks[0])
    red = QColor(CONFLICT_COLOR)

    def red_drawn() -> bool:
        image = right.viewport().grab().toImage()
        return any(
            image.pixelColor(x_, y_) == red
            for x_ in range(0, image.width(), 2)
            for y_ in range(0, image.height(), 2)
        )

    qtbot.waitUntil(red_drawn, timeout=10_000)
    # off and on again: the marks come back on the right, and leave with the pane
    qtbot.keyClick(
        window.graph,
        Qt.Key.Key_D,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert not panes.on and conflict_marks(window.graph)
    assert not window.markers.followers


def test_stepping_the_timeline_rings_the_step_in_the_now_pane_too(
    make_window, qtbot, pick, find_action, drop_axis
):
    window = make_window("example:conflict")
    x = window.session.graph.value_by_name("x").id
    count = window.propagation.count
    drop_axis(window, x, 1, "model")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    panes = open_side_by_side(window, pick, find_action)
    assert panes.modes == ("before", "now")
    right = panes.right.view

    def step_items(view, tag):
        return [i for i in view.graph_scene.items() if i.data(0) == tag]

    assert not step_items(right, "step-ring")
    # Home, then the right arrow, on the graph: the first steps of propagation
    qtbot.keyClick(window.graph, Qt.Key.Key_Home)
    qtbot.keyClick(window.graph, Qt.Key.Key_Right)
    assert window.timeline.active
    qtbot.waitUntil(lambda: bool(step_items(right, "step-ring")), timeout=5000)
    single = window.timeline.overlay
    # the left pane shows before the edit: its rings are hidden; the right one rings the
    # step's op in the axis colour, as the single graph would
    assert not step_items(panes.left.view, "step-ring")
    ring = step_items(right, "step-ring")[0]
    step = window.timeline.playback.steps()[0]
    assert ring.pen().color() == axis_color(window.session.mesh, step.axis.split(":(")[0])
    assert panes.right_overlay.marked_nodes and not single.marked_nodes
    # the badges show the sharding at the step in the Now pane
    at_step = window.timeline.spec_at(x)
    assert (
        right.badge_text(x) == "[" + ", ".join("+".join(d.axes) or "_" for d in at_step.dims) + "]"
    )
    # with Now on the left as well, both panes draw the same rings and flows at each step
    choose(panes.left, "now")

    def drawn(view):
        return sorted(
            (i.data(0), i.pen().color().name(), round(i.boundingRect().x()))
            for i in view.graph_scene.items()
            if i.data(0) in ("step-ring", "step-flow", "changed")
        )

    assert drawn(right) == drawn(panes.left.view) and drawn(right)
    qtbot.keyClick(window.graph, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: drawn(right) == drawn(panes.left.view), timeout=5000)
    qtbot.keyClick(window.graph, Qt.Key.Key_End)
    qtbot.waitUntil(lambda: drawn(right) == drawn(panes.left.view), timeout=5000)
    assert right.badge_text(x) == panes.left.view.badge_text(x)


def tags_by_node(view) -> dict[str, str]:
    return {m.parentItem().node.label: m.text for m in collective_tags(view)}


def test_the_gspmd_pane_tags_gspmds_compiled_collectives_and_each_badge_one_spec(
    make_window, qtbot, pick, find_action
):
    window = make_window("example:conflict")
    panes = open_side_by_side(window, pick, find_action)
    qtbot.waitUntil(lambda: not window.gspmd.comparing, timeout=120_000)
    qtbot.waitUntil(lambda: window.session.analysis.compiled is not None, timeout=120_000)
    assert panes.modes == ("shardy", "gspmd")
    left, right = panes.left.view, panes.right.view
    # Shardy's compile gathers both operands of add; GSPMD's permutes one
    assert tags_by_node(left) == {"add": "⇄ AG×2"}
    assert tags_by_node(right) == {"add": "⇄ CP"}
    (tag,) = collective_tags(right)
    assert "collective-permute" in tag.toolTip()
    assert "GSPMD's compiled collectives" in panes.right.header.toolTip()
    # The GSPMD toggle on: each badge writes one spec beside it, the panes' difference
    out = add_result(window)
    pick(window, "&View", "Compare with &GSPMD")
    qtbot.waitUntil(lambda: window.gspmd.view.state == "done", timeout=120_000)
    assert [m.text for m in diff_marks(right, out)] == ["Shardy [_, _]"]
    assert [m.text for m in diff_marks(left, out)] == ["GSPMD [data, _]"]
    # Neither pane GSPMD's: the toggle's mark is back, the pane marks nothing
    choose(panes.right, "now")
    assert [m.text for m in diff_marks(right, out)] == ["GSPMD [data, _]"]
    assert tags_by_node(right) == {"add": "⇄ AG×2"}
    pick(window, "&View", "Side by si&de")
    assert [m.text for m in diff_marks(window.graph, out)] == ["GSPMD [data, _]"]
    assert window.markers.gspmd_values() == {out}


def test_each_pane_has_its_legend_button(make_window, qtbot, pick, find_action):
    window = make_window("example:conflict")
    panes = open_side_by_side(window, pick, find_action)
    for pane in (panes.left, panes.right):
        (button,) = [b for b in pane.view.findChildren(QToolButton) if b.text() == "Legend"]
        assert button.isVisible()
        port = pane.view.viewport().geometry()
        assert port.contains(button.geometry())
        assert button.geometry().left() - port.left() < 20
        assert port.bottom() - button.geometry().bottom() < 20
    button = panes.right_legend
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.addWidget(button.dialog)
    assert button.dialog.isVisible()
    assert any(e.startswith("side by side") for e in button.dialog.legend.entries)
    pick(window, "&View", "Side by si&de")
    assert panes.right_legend is None and window.legend_button.isVisible()
