"""The timeline dock driving the window: playing, seeking, filters, keys, edits, provenance."""

from PySide6.QtCore import QPoint, Qt

from shardscope.backend.session.playback import StepFilter
from shardscope.viewers.graph.items import NodeItem


def _badges(window):
    return {vid: window.graph.badge_text(vid) for vid in window.graph.graph_scene._badges_by_value}


def _text(sharding):
    return "[" + ", ".join("+".join(d) or "_" for d in sharding.dims) + "]"


def _expected(window, k):
    """Badge texts at step k: the timeline's state, or (for a value propagation left
    without a sharding) what the session shows."""
    tl = window.session.propagation.timeline
    out = {}
    for vid in window.graph.graph_scene._badges_by_value:
        state = tl.value_at(vid, k)
        out[vid] = _text(state) if state is not None else window.session.spec_text(vid)
    return out


def _flow_items(window):
    return [i for i in window.graph.scene().items() if i.data(0) == "step-flow"]


def _ring_items(window):
    return [i for i in window.graph.scene().items() if i.data(0) == "step-ring"]


def test_play_to_the_end_shows_the_final_state(make_window, qtbot):
    window = make_window("example:mlp")
    final = _badges(window)
    panel = window.timeline.panel
    pb = window.timeline.playback
    assert len(pb) > 3 and not pb.active
    pb.set_speed(240.0)
    qtbot.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    assert pb.playing and panel.play_button.text() == "❚❚"
    # at the first step the badges are the state at that step, not the final one
    assert _badges(window) != final
    qtbot.waitUntil(lambda: not pb.playing, timeout=10_000)
    assert pb.at_end and panel.play_button.text() == "▶"
    assert _badges(window) == final
    # leaving step mode: the final state, no overlay
    qtbot.mouseClick(panel.final_button, Qt.MouseButton.LeftButton)
    assert not pb.active and _badges(window) == final
    assert _flow_items(window) == [] and _ring_items(window) == []


def test_seek_on_the_scrubber_shows_that_step_on_badges_and_tiles(make_window, qtbot):
    window = make_window("example:mlp")
    graph = window.session.graph
    panel = window.timeline.panel
    pb = window.timeline.playback
    scrubber = panel.scrubber
    # click on the scrubber where position 0 is
    x = int(scrubber._x_of(0.5))
    qtbot.mouseClick(scrubber, Qt.MouseButton.LeftButton, pos=QPoint(x, 10))
    assert pb.position == 0
    assert _badges(window) == _expected(window, pb.step_index)
    # the step's op is ringed and its edges drawn in the axis' colour
    assert _ring_items(window) and _flow_items(window)
    # select the dot's result: the inspector and tile grid show it at this step
    step = pb.steps()[0]
    target = step.values[0]
    window.graph.select_value(target)
    state = pb.value_at(target)
    slots = [tuple(s.spec.axes) for s in window.inspector.slots]
    assert slots == [tuple(d) for d in state.dims]
    grid = window.inspector.tile_grid
    assert grid.tile_map is not None
    tiles_axes = [tuple(d.axes) for d in grid._spec.dims]
    assert tiles_axes == [tuple(d) for d in state.dims]
    # typing a step in the jump box goes there; the tile grid follows the selected tensor
    last = pb.timeline.last_index
    panel.jump_box.setValue(last)
    panel.jump_box.editingFinished.emit()
    assert pb.step_index == last
    final = pb.timeline.final[target]
    assert [tuple(d.axes) for d in grid._spec.dims] == [tuple(d) for d in final.dims]
    assert _badges(window) == _expected(window, last)
    assert graph is window.session.graph


def test_keys_step_play_and_jump(make_window, qtbot):
    window = make_window("example:mlp")
    panel = window.timeline.panel
    pb = window.timeline.playback
    window.docks["dock_timeline"].show()
    panel.setFocus()
    qtbot.keyClick(panel, Qt.Key.Key_Right)
    assert pb.position == 0
    qtbot.keyClick(panel, Qt.Key.Key_Right)
    assert pb.position == 1
    assert _badges(window) == _expected(window, pb.step_index)
    qtbot.keyClick(panel, Qt.Key.Key_Left)
    assert pb.position == 0
    qtbot.keyClick(panel, Qt.Key.Key_End)
    assert pb.at_end
    qtbot.keyClick(panel, Qt.Key.Key_Home)
    assert pb.position == 0
    qtbot.keyClick(panel, Qt.Key.Key_Space)
    assert pb.playing
    qtbot.keyClick(panel, Qt.Key.Key_Space)
    assert not pb.playing
    qtbot.keyClick(panel, Qt.Key.Key_Escape)
    assert not pb.active


def test_filters_by_axis_tensor_and_scope(make_window, qtbot):
    window = make_window("example:mlp")
    panel = window.timeline.panel
    pb = window.timeline.playback
    total = len(pb)
    panel.axis_combo.setCurrentIndex(panel.axis_combo.findData("model"))
    panel.axis_combo.activated.emit(panel.axis_combo.currentIndex())
    assert 0 < len(pb) < total
    assert all(any(s.axis == "model" for s in pb.steps(i)) for i in pb.indices)
    assert panel.filter_label.text() == f"{len(pb)} of {total} steps"
    # scope: only steps in layer2
    panel.axis_combo.setCurrentIndex(0)
    qtbot.keyClicks(panel.scope_box, "layer2")
    qtbot.keyClick(panel.scope_box, Qt.Key.Key_Return)
    assert 0 < len(pb) < total
    graph = window.session.graph
    for i in pb.indices:
        assert any((graph.ops[s.op].scope or "").startswith("layer2") for s in pb.steps(i))
    panel.scope_box.clear()
    # tensor: by the name the graph shows
    qtbot.keyClicks(panel.tensor_box, "params['b1']")
    qtbot.keyClick(panel.tensor_box, Qt.Key.Key_Return)
    assert pb.filter == StepFilter(value=graph.value_by_name("params['b1']").id)
    assert len(pb) >= 1
    # an unknown tensor is refused with a message, and the filter stays as it was
    panel.tensor_box.setText("no_such_tensor")
    qtbot.keyClick(panel.tensor_box, Qt.Key.Key_Return)
    assert panel.filter_label.text() == "no such tensor"
    assert any("no tensor is named 'no_such_tensor'" in m for m in window.messages.messages())
    assert pb.filter.value == graph.value_by_name("params['b1']").id


def test_a_step_inside_a_folded_scope_lights_the_scope_node(make_window, qtbot):
    window = make_window("example:transformer")
    view = window.graph
    view.collapse_all()
    pb = window.timeline.playback
    graph = window.session.graph
    # a step whose op sits in a scope folded on screen
    for index in pb.all_indices:
        step = pb.steps(index)[0]
        if step.op is None:
            continue
        node = view.layout_.node_of_op.get(window.timeline.overlay.op_holder(step.op))
        if node is not None and view.nodes[node].node.kind == "scope":
            break
    else:
        raise AssertionError("no step inside a folded scope")
    pb.seek_step(index)
    assert window.timeline.overlay.marked_nodes[0] == node
    # the view scrolled to it
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.contains(view.nodes[node].sceneBoundingRect().center())
    (ring,) = [r for r in _ring_items(window)][:1]
    scope_item = view.nodes[node]
    assert ring.sceneBoundingRect().contains(scope_item.sceneBoundingRect().center())
    assert isinstance(scope_item, NodeItem) and graph.ops[step.op].scope


def test_an_edit_rings_the_changed_badges_and_the_timeline_waits_at_its_start(
    make_window, qtbot, drop_axis
):
    window = make_window("example:mlp")
    graph = window.session.graph
    b2 = graph.value_by_name("params['b2']").id
    before = dict(_badges(window))
    count = window.propagation.count
    drop_axis(window, b2, 0, "data")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    qtbot.waitUntil(lambda: window.timeline.playback is not None, timeout=10_000)
    after = _badges(window)
    changed = {v for v in after if after[v] != before.get(v)}
    assert changed and changed <= window.timeline.changed
    rings = [i for i in window.graph.scene().items() if i.data(0) == "changed"]
    assert len(rings) >= len(changed)
    assert "after editing params['b2']" in window.timeline.panel.step_label.text()
    assert not window.timeline.playback.active


def test_provenance_chain_with_clickable_links(make_window, qtbot):
    window = make_window("example:mlp")
    graph = window.session.graph
    b1 = graph.value_by_name("params['b1']").id
    window.graph.select_value(b1, center=True)
    view = window.timeline.provenance_view
    # the tensor alone: one short line per dimension, each linking to its chain
    lines = [" ".join(t.split()) for t in view.toPlainText().splitlines()]
    rank = graph.values[b1].rank
    assert [t.split(" holds")[0] for t in lines if t.startswith("dim ")] == [
        f"dim {d}" for d in range(rank)
    ]
    assert "each tensor from the next" not in view.toPlainText()
    assert [link for link in view.links if link.startswith("dim:")] == [
        f"dim:{d}" for d in range(rank)
    ]
    # click dim 0 of the tensor in the inspector: its chain
    slot = window.inspector.slot(0)
    qtbot.mouseClick(slot, Qt.MouseButton.LeftButton)
    text = view.toPlainText()
    assert "dim 0 holds" in text and "model" in text
    assert "your spec" in text and "params['w1']" in text
    assert "each tensor from the next" in text
    # its "Every dimension" link: the short lines again, and the "How?" of dim 0 its
    # chain again
    view.activate("dim:-1")
    assert "each tensor from the next" not in view.toPlainText()
    view.activate("dim:0")
    assert view.toPlainText() == text
    steps = [link for link in view.links if link.startswith("step:")]
    assert steps
    # a step link seeks the timeline there
    view.activate(steps[-1])
    pb = window.timeline.playback
    assert pb.active and pb.step_index == int(steps[-1].split(":")[1])
    # a tensor link selects that tensor
    w1 = graph.value_by_name("params['w1']").id
    view.activate(f"value:{w1}")
    assert window.selected_value == w1
    assert window.inspector.title.text() == "params['w1']"


def test_provenance_and_the_tensor_dock_show_the_same_time(make_window, qtbot):
    window = make_window("example:mlp")
    graph = window.session.graph
    pb = window.timeline.playback
    # a tensor whose axis arrives at a step (not held from the start)
    target, step = next(
        (v.id, pb.timeline.changes(v.id)[0][0])
        for v in graph.values
        if v.rank and pb.timeline.changes(v.id) and v.id not in window.session.specs
    )
    window.graph.select_value(target, center=True)
    window.select_value(target)
    view = window.timeline.provenance_view
    last = pb.all_indices[-1]
    assert f"Final state, after the last step ({last})" in view.toPlainText()
    # the user steps to just before the axis arrives (the jump box, then Enter)
    before = max(i for i in pb.all_indices if i < step) if step > pb.all_indices[0] else None
    panel = window.timeline.panel
    if before is not None:
        panel.jump_box.lineEdit().selectAll()
        qtbot.keyClicks(panel.jump_box.lineEdit(), str(before))
        qtbot.keyClick(panel.jump_box.lineEdit(), Qt.Key.Key_Return)
        assert pb.step_index == before
        # once the user stays on the step
        qtbot.waitUntil(lambda: f"At step {before}:" in view.toPlainText(), timeout=2000)
        text = view.toPlainText()
        assert f"At step {before}: what propagation had found by then" in text
        assert f"arrives later, at step {step}" in text
        assert f"step:{step}" in view.links
    # at the step itself both docks show the axis
    panel.jump_box.lineEdit().selectAll()
    qtbot.keyClicks(panel.jump_box.lineEdit(), str(step))
    qtbot.keyClick(panel.jump_box.lineEdit(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: f"At step {step}:" in view.toPlainText(), timeout=2000)
    text = view.toPlainText()
    assert f"At step {step}" in text and "arrives later" not in text.split("holds")[1][:40]
    assert window.timeline.spec_at(target) is not None
    # while playing it keeps the step playing started from, and says so, instead of
    # following every step; a pause explains the step shown
    window.graph.setFocus()
    qtbot.keyClick(window.graph, Qt.Key.Key_Home)
    first = pb.step_index
    qtbot.keyClick(window.graph, Qt.Key.Key_Space)
    assert pb.playing
    text = view.toPlainText()
    assert f"At step {first}: " in text and "Playing on from here: pause (space)" in text
    qtbot.waitUntil(lambda: pb.step_index != first, timeout=5000)
    assert f"At step {first}: " in view.toPlainText()
    qtbot.keyClick(window.graph, Qt.Key.Key_Space)
    assert not pb.playing and f"At step {pb.step_index}: " in view.toPlainText()
    assert "Playing on" not in view.toPlainText()
    # Esc in the dock: the final state again, in both
    panel.setFocus()
    qtbot.keyClick(panel, Qt.Key.Key_Escape)
    assert not pb.active
    qtbot.waitUntil(lambda: "Final state" in view.toPlainText(), timeout=2000)
    assert window.timeline.spec_at(target) is None


def test_why_a_dimension_is_replicated_names_the_conflict(make_window, qtbot):
    window = make_window("example:conflict")
    graph = window.session.graph
    out = graph.functions[graph.main].results[0]
    window.select_value(out)
    window.timeline.select(out, 0)
    text = window.timeline.provenance_view.toPlainText()
    assert "is replicated" in text and "stablehlo.add" in text
    assert "conflict:0" in window.timeline.provenance_view.links
    window.timeline.provenance_view.activate("conflict:0")
    selected = [i for i in window.graph.scene().selectedItems() if isinstance(i, NodeItem)]
    assert selected and selected[0].node.op == window.session.propagation.conflicts[0].op


def test_without_propagation_the_dock_says_what_to_do(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    panel = window.timeline.panel
    assert not panel.play_button.isEnabled()
    assert "No propagation yet" in panel.step_label.text()
    qtbot.keyClick(panel, Qt.Key.Key_Space)  # nothing to play: nothing happens
    assert window.timeline.playback is None


def test_the_timeline_keys_work_on_the_graph_view(make_window, qtbot):
    window = make_window("example:mlp")
    pb = window.timeline.playback
    view = window.graph
    final = _badges(window)
    qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.viewport().rect().center()
    )
    assert window.focusWidget() is view
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Right)
    assert pb.position == 0
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert pb.position == 1
    assert _badges(window) == _expected(window, pb.step_index)
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert pb.position == 0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert pb.at_end
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert pb.position == 0
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert pb.playing
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert not pb.playing
    # keys with Ctrl or Alt go on to the graph
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert pb.position == 0
    # Escape leaves step mode: the badges show the final shardings again
    assert _badges(window) != final
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not pb.active
    assert _badges(window) == final
    # not stepping, Escape is the view's own again
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not pb.active
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert pb.position == 0
    # the find box keeps its arrows for its text
    find = window.graph_panel.find_box
    find.setFocus()
    qtbot.keyClicks(find, "dot")
    qtbot.keyClick(find, Qt.Key.Key_Left)
    assert find.cursorPosition() == 2 and pb.position == 0


def test_without_a_timeline_the_arrows_scroll_the_graph(make_window, qtbot):
    window = make_window("example:transformer", propagate=False)
    view = window.graph
    view.zoom(4.0)
    bar = view.horizontalScrollBar()
    bar.setValue(bar.minimum())
    before = bar.value()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert bar.value() > before


def test_end_while_playing_shows_the_last_step_and_stops_at_once(make_window, qtbot):
    window = make_window("example:mlp")
    pb = window.timeline.playback
    panel = window.timeline.panel
    window.graph.setFocus()
    qtbot.keyClick(window.graph, Qt.Key.Key_Space)
    assert pb.playing and window.timeline.timer.isActive()
    qtbot.keyClick(window.graph, Qt.Key.Key_End)
    # no tick later: the key itself stopped it there
    assert pb.at_end and not pb.playing and not window.timeline.timer.isActive()
    assert panel.play_button.text() == "▶" and panel.jump_box.value() == pb.all_indices[-1]


def test_slow_steps_drop_frames_and_keys_still_act(make_window, qtbot):
    import time

    window = make_window("example:transformer")
    pb = window.timeline.playback
    assert len(pb) > 100
    pb.set_speed(10.0)
    shown = []

    def slow(event) -> None:
        # a step that takes longer to show than the period (a slow display)
        if event.kind == "position":
            shown.append(pb.position)
            time.sleep(0.25)

    pb.home()
    pb.listen(slow)
    window.graph.setFocus()
    t = time.perf_counter()
    qtbot.keyClick(window.graph, Qt.Key.Key_Space)
    qtbot.wait(1500)
    wall = time.perf_counter() - t
    # the clock decides the step: it moved on at 10 steps a second, skipping steps it had
    # no time to show, instead of showing each one late
    assert pb.position >= int(8 * wall) - 2
    assert len(shown) < pb.position
    assert any(b - a > 1 for a, b in zip(shown, shown[1:], strict=False))
    # space pauses at once, not after a queue of late steps
    qtbot.keyClick(window.graph, Qt.Key.Key_Space)
    stopped = pb.position
    assert not pb.playing
    qtbot.wait(400)
    assert pb.position == stopped
    pb.unlisten(slow)
