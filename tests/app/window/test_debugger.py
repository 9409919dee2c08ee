"""The debugger in the window, as a user meets it on example:conflict: the conflict on the
add, its factor table, the collectives and their device groups, the GSPMD comparison and
the legend; and what the window says when there is nothing to show or the comparison
fails."""

import dataclasses
import time

from PySide6.QtCore import Qt

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import GspmdComparison
from shardscope.viewers.graph.items import BadgeItem, NodeItem
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
)
from tests.support.inputs import write_input


def node_item(window, label: str) -> NodeItem:
    (item,) = [n for n in window.graph.nodes if n.node.label == label]
    return item


def marks(item, kind) -> list:
    return [c for c in item.childItems() if isinstance(c, kind)]


def click_tree_row(qtbot, tree, row: int) -> None:
    rect = tree.visualItemRect(tree.topLevelItem(row))
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def click_table_row(qtbot, table, row: int) -> None:
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def selected_graph_items(window):
    return window.graph.scene().selectedItems()


def add_result(window) -> int:
    graph = window.session.graph
    (add,) = [op for op in graph.ops if op.short_name == "add"]
    return add.results[0]


def test_the_conflict_on_the_add_is_marked_listed_and_explained(make_window, qtbot):
    window = make_window("example:conflict")
    add = node_item(window, "add")
    assert marks(add, ConflictMarkItem)
    assert not marks(node_item(window, "sine"), ConflictMarkItem)
    conflicts = window.debugger.conflicts
    assert not window.docks["dock_conflicts"].visibleRegion().isEmpty()
    assert conflicts.status.text() == "1 conflict: choose one to see its factor table."
    click_tree_row(qtbot, conflicts.list, 0)
    # The add is selected on the graph, its source line shown.
    assert selected_graph_items(window) == [node_item(window, "add")]
    assert "stablehlo.add" in window.source_view.header.text()
    table = conflicts.table
    assert table.isVisible() and table.rowCount() == 3
    assert [table.cell_text(r, 4) for r in range(3)] == ["loses data", "loses model", "keeps [_]"]
    assert "by longest common prefix" in conflicts.title.text()
    assert "Shardy's explicit-reshard passes insert" in conflicts.partitioner.text()
    # A tensor row selects that tensor everywhere.
    y = window.session.graph.value_by_name("y").id
    click_table_row(qtbot, table, 1)
    assert window.selected_value == y
    (badge,) = [i for i in selected_graph_items(window) if isinstance(i, BadgeItem)]
    assert badge.value_id == y


def test_choosing_a_collective_outlines_its_device_groups(make_window, qtbot, wait_idle):
    window = make_window("example:conflict")
    window.docks["dock_collectives"].raise_()
    view = window.debugger.collectives
    table = view.table
    assert [r[0] for r in view.row_texts()] == ["all_gather", "collective_permute", "all_slice"]
    assert marks(node_item(window, "add"), CollectiveMarkItem)
    assert marks(node_item(window, "return"), CollectiveMarkItem)
    grid = window.mesh_editor.grid
    assert grid.groups == []
    click_table_row(qtbot, table, 0)  # all_gather over data, for the return
    assert grid.groups == [(0, 2, 4, 6), (1, 3, 5, 7)]
    assert "2 groups of 4 devices" in view.groups.text()
    assert window.selected_value == add_result(window)
    click_table_row(qtbot, table, 2)  # all_slice over the major half of data
    assert grid.groups == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert selected_graph_items(window) == [node_item(window, "add")]
    # An edit makes the result stale: the outlines go with it.
    x = window.session.graph.value_by_name("x").id
    assert window.on_spec_dropped(x, 0, "model")
    assert grid.groups == []
    assert view.status.text() == "Propagating…"
    wait_idle(window)
    assert window.session.propagation is not None
    window.menu_actions["undo"].trigger()
    wait_idle(window)


def test_the_gspmd_toggle_marks_the_adds_result(make_window, qtbot, pick, find_action):
    window = make_window("example:conflict")
    gspmd = window.debugger.gspmd
    assert gspmd.state == "off"
    pick(window, "&View", "Compare with &GSPMD")
    assert find_action(window, "&View", "Compare with &GSPMD").isChecked()
    assert not window.docks["dock_gspmd"].visibleRegion().isEmpty()
    qtbot.waitUntil(lambda: gspmd.state != "running", timeout=120_000)
    assert gspmd.state == "done", gspmd.status.text()
    out = add_result(window)
    assert window.debugger.markers.gspmd_values() == {out}
    (badge,) = window.graph.graph_scene.badges_of(out)
    (mark,) = marks(badge, GspmdMarkItem)
    assert (mark.shardy, mark.gspmd) == ("[_, _]", "[data, _]")
    assert gspmd.row_texts()[0][:3] == ["result[0]", "[_, _]", "[data, _]"]
    # GSPMD's compiled collectives per kind, beside Shardy's.
    counts = gspmd.count_texts()
    assert counts and all(row[2].isdigit() for row in counts), counts
    specs = dict(window.session.specs)
    pick(window, "&View", "Compare with &GSPMD")
    assert gspmd.state == "off" and not marks(badge, GspmdMarkItem)
    assert dict(window.session.specs) == specs


def test_a_failing_gspmd_worker_is_reported_and_leaves_the_session(
    make_window, qtbot, pick, monkeypatch
):
    def crash(program, result, **kwargs):
        raise ShardscopeError("the GSPMD compile crashed (signal 11): see its log")

    monkeypatch.setattr("shardscope.app.window.debugger.compare_gspmd", crash)
    window = make_window("example:conflict")
    result, specs = window.session.propagation, dict(window.session.specs)
    pick(window, "&View", "Compare with &GSPMD")
    gspmd = window.debugger.gspmd
    qtbot.waitUntil(lambda: gspmd.state == "failed", timeout=30_000)
    assert gspmd.status.text() == (
        "The GSPMD comparison failed: the GSPMD compile crashed (signal 11): see its log"
    )
    assert any("GSPMD comparison failed" in m for m in window.messages.messages("error"))
    assert window.debugger.markers.gspmd_values() == set()
    assert window.session.propagation is result and dict(window.session.specs) == specs
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_before_propagation_the_docks_say_how_to_start(make_window, qtbot, pick, monkeypatch):
    compared = []

    def agree(program, result, **kwargs):
        compared.append(result)
        return GspmdComparison([], [])

    monkeypatch.setattr("shardscope.app.window.debugger.compare_gspmd", agree)
    window = make_window("example:conflict", propagate=False)
    debugger = window.debugger
    assert debugger.conflicts.status.text().startswith("No propagation yet: propagate (F5)")
    assert debugger.collectives.status.text().startswith("No propagation yet")
    assert not marks(node_item(window, "add"), ConflictMarkItem)
    pick(window, "&View", "Compare with &GSPMD")
    assert debugger.gspmd.state == "waiting" and compared == []
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: debugger.gspmd.state == "done", timeout=60_000)
    assert compared == [window.session.propagation]
    assert debugger.gspmd.status.text() == "GSPMD and Shardy agree on every value."
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_a_program_without_conflicts_says_so(make_window):
    window = make_window("example:mlp")
    assert window.debugger.conflicts.status.text().startswith("No conflicts")
    assert not window.debugger.markers.conflict_marks
    assert window.debugger.collectives.table.rowCount() == len(
        window.session.propagation.collectives
    )


def test_the_legend_opens_from_the_view_menu_and_the_graph(make_window, qtbot, pick):
    window = make_window("example:conflict", propagate=False)
    pick(window, "&View", "Badge &legend")
    dialog = window.debugger.legend_button.dialog
    assert dialog is not None and dialog.isVisible()
    button = window.debugger.legend_button
    assert button.parent() is window.graph.viewport() and button.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.debugger.legend_button.dialog is not dialog
    assert window.debugger.legend_button.dialog.isVisible()


def test_user_priority_and_open_dims_show_on_the_badge(make_window, wait_idle):
    window = make_window("example:conflict")
    x = window.session.graph.value_by_name("x").id
    assert window.on_spec_menu(x, 1, "open", None)
    assert window.on_spec_menu(x, 0, "priority", 1)
    dims = window.session.spec(x).dims
    assert dims[0].priority == 1 and dims[1].is_open
    notes = window.debugger.markers.note_marks
    assert [n.notes for n in notes] == [{0: "p1", 1: "?"}]
    wait_idle(window)


def test_quitting_during_a_gspmd_compile_ends_its_worker(make_window, qtbot, tmp_path, monkeypatch):
    # The comparison's worker runs the program again; this one hangs there.
    from shardscope.backend.gspmd.compare import run_gspmd

    started = tmp_path / "started"
    path = write_input(
        tmp_path,
        "hangs.py",
        f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('x')\ntime.sleep(600)\n",
    )

    def hang(program, result, **kwargs):
        stand_in = dataclasses.replace(program, kind="python", path=path, source=path)
        return run_gspmd(stand_in, result.mesh.shape, {})

    monkeypatch.setattr("shardscope.app.window.debugger.compare_gspmd", hang)
    window = make_window("example:conflict")
    window.debugger.set_gspmd(True)
    qtbot.waitUntil(started.exists, timeout=60_000)
    assert window.debugger.comparing
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(5_000)


def test_stepping_to_where_the_conflict_was_settled_highlights_it(make_window, qtbot):
    window = make_window("example:conflict")
    conflicts = window.debugger.conflicts
    row = conflicts.list.topLevelItem(0)
    view = window.graph
    selected_before = [i for i in view.scene().selectedItems()]
    assert conflicts.settled == [] and not row.font(0).bold()
    # step 0 brings data into the add's first operand: after it the add keeps nothing
    window.timeline.panel.setFocus()
    qtbot.keyClick(window.timeline.panel, Qt.Key.Key_Right)
    assert window.timeline.playback.step_index == 0
    assert conflicts.settled == [0] and row.font(0).bold()
    assert conflicts.list.currentItem() is row
    assert "by longest common prefix" in conflicts.title.text()
    # highlighting is not choosing: the graph's selection stays as it was
    assert view.scene().selectedItems() == selected_before
    # back to the final state: the highlight goes
    qtbot.keyClick(window.timeline.panel, Qt.Key.Key_Escape)
    assert conflicts.settled == [] and not row.font(0).bold()
