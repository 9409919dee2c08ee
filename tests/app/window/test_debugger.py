"""The debugger in the window, as a user meets it on example:conflict: the conflict on the
add, its factor table, the collectives (Shardy's prediction, then the compiled program's,
priced for the hardware picked) and their device groups, the GSPMD comparison and the
legend; and what the window says when there is nothing to show, the compile or the
comparison fails."""

import dataclasses
import time

from PySide6.QtCore import Qt

from shardscope.backend.cost.hardware import DEFAULT_PROFILE
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import GspmdComparison
from shardscope.backend.hlo.collectives import read_collectives
from shardscope.backend.run.result import NotCompiled
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.table_items import INDEX_ROLE
from shardscope.viewers.graph.items import BadgeItem, NodeItem
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
)
from tests.support.compile_oracle import compiled_text
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
    conflicts = window.conflicts
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


def test_choosing_a_predicted_collective_outlines_its_device_groups(make_window, qtbot, wait_idle):
    window = make_window("example:conflict")
    compiled_in(qtbot, window)
    window.docks["dock_collectives"].raise_()
    view = window.collectives
    bar = view.tabs
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
    table = view.table
    assert [r[0] for r in view.row_texts()] == ["all_gather", "collective_permute", "all_slice"]
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
    gspmd = window.gspmd.view
    assert gspmd.state == "off"
    pick(window, "&View", "Compare with &GSPMD")
    assert find_action(window, "&View", "Compare with &GSPMD").isChecked()
    assert not window.docks["dock_gspmd"].visibleRegion().isEmpty()
    qtbot.waitUntil(lambda: gspmd.state != "running", timeout=120_000)
    assert gspmd.state == "done", gspmd.status.text()
    out = add_result(window)
    assert window.markers.gspmd_values() == {out}
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

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", crash)
    window = make_window("example:conflict")
    result, specs = window.session.propagation, dict(window.session.specs)
    pick(window, "&View", "Compare with &GSPMD")
    gspmd = window.gspmd.view
    qtbot.waitUntil(lambda: gspmd.state == "failed", timeout=30_000)
    assert gspmd.status.text() == (
        "The GSPMD comparison failed: the GSPMD compile crashed (signal 11): see its log"
    )
    assert any("GSPMD comparison failed" in m for m in window.messages.messages("error"))
    assert window.markers.gspmd_values() == set()
    assert window.session.propagation is result and dict(window.session.specs) == specs
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_before_propagation_the_docks_say_how_to_start(make_window, qtbot, pick, monkeypatch):
    compared = []

    def agree(program, result, **kwargs):
        compared.append(result)
        return GspmdComparison([], [])

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", agree)
    window = make_window("example:conflict", propagate=False)
    assert window.conflicts.status.text().startswith("No propagation yet: propagate (F5)")
    assert window.collectives.status.text().startswith("No propagation yet")
    assert not marks(node_item(window, "add"), ConflictMarkItem)
    pick(window, "&View", "Compare with &GSPMD")
    assert window.gspmd.view.state == "waiting" and compared == []
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: window.gspmd.view.state == "done", timeout=60_000)
    assert compared == [window.session.propagation]
    assert window.gspmd.view.status.text() == "GSPMD and Shardy agree on every value."
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_a_program_without_conflicts_says_so(make_window):
    window = make_window("example:mlp")
    assert window.conflicts.status.text().startswith("No conflicts")
    assert not window.markers.conflict_marks
    assert window.collectives.table.rowCount() == len(window.session.propagation.collectives)


def test_the_legend_opens_from_the_view_menu_and_the_graph(make_window, qtbot, pick):
    window = make_window("example:conflict", propagate=False)
    pick(window, "&View", "Badge &legend")
    dialog = window.legend_button.dialog
    assert dialog is not None and dialog.isVisible()
    button = window.legend_button
    assert button.parent() is window.graph and button.isVisible()  # over the viewport
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.legend_button.dialog is not dialog
    assert window.legend_button.dialog.isVisible()


def test_user_priority_and_open_dims_show_on_the_badge(make_window, wait_idle):
    window = make_window("example:conflict")
    x = window.session.graph.value_by_name("x").id
    assert window.on_spec_menu(x, 1, "open", None)
    assert window.on_spec_menu(x, 0, "priority", 1)
    dims = window.session.spec(x).dims
    assert dims[0].priority == 1 and dims[1].is_open
    notes = window.markers.note_marks
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

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", hang)
    window = make_window("example:conflict")
    window.gspmd.set_on(True)
    qtbot.waitUntil(started.exists, timeout=60_000)
    assert window.gspmd.comparing
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(5_000)


def test_stepping_to_where_the_conflict_was_settled_highlights_it(make_window, qtbot):
    window = make_window("example:conflict")
    compiled_in(qtbot, window)  # Esc cancels a compile under way
    conflicts = window.conflicts
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


def compiled_in(qtbot, window):
    """The window's current propagation once the window's XLA compile of it came."""
    qtbot.waitUntil(
        lambda: (
            window.session.propagation is not None
            and not window.propagation.pending
            and not window.propagation.compiler.compiling
            and (
                window.session.analysis.compiled_collectives is not None
                or window.session.analysis.compile_error is not None
            )
        ),
        timeout=90_000,
    )
    return window.session.analysis


def test_the_compiled_collectives_replace_the_prediction_in_the_dock_and_on_the_graph(
    make_window, qtbot
):
    window = make_window("example:conflict")
    window.docks["dock_collectives"].raise_()
    view = window.collectives
    assert "Shardy's prediction (before compiling)" in view.header.text()
    predicted_tags = marks(node_item(window, "return"), CollectiveMarkItem)
    assert predicted_tags and not predicted_tags[0].compiled
    result = compiled_in(qtbot, window)
    expected = read_collectives(compiled_text(window.session.program))
    assert view.showing_compiled and "compiled program's collectives" in view.header.text()
    assert sorted(view.column("Kind")) == sorted(c["kind"] for c in expected)
    assert sorted(int(n) for n in view.column("Operands")) == sorted(
        c["operands"] for c in expected
    )
    # The tags follow: the compiled all-gathers sit on the add whose operands they gather.
    (tag,) = marks(node_item(window, "add"), CollectiveMarkItem)
    assert tag.compiled and tag.text == f"⇄ AG×{len(expected)}"
    assert "in the compiled program (XLA)" in tag.toolTip()
    assert not marks(node_item(window, "return"), CollectiveMarkItem)
    # Choosing one selects its op, shows its line, outlines its groups on the mesh.
    grid = window.mesh_editor.grid
    click_table_row(qtbot, view.compiled_table, 0)
    (index,) = {view.compiled_table.item(0, 0).data(Qt.ItemDataRole.UserRole)}
    c = result.compiled_collectives[index]
    assert node_item(window, "add") in selected_graph_items(window)
    assert "stablehlo.add" in window.source_view.header.text()
    assert sorted(grid.groups) == sorted(device_groups(window.session.mesh, c.axes))
    assert f"groups of {len(c.device_groups[0])} devices" in view.groups.text()


def test_compiled_groups_are_outlined_where_the_grid_shows_those_devices(make_window, qtbot):
    window = make_window("example:conflict")
    mesh = window.session.mesh
    # The devices in another order: the grid names each position by its device id.
    shuffled = Mesh(mesh.axes, (0, 2, 4, 6, 1, 3, 5, 7), mesh.axis_types)
    assert window.on_mesh_edited(shuffled)
    qtbot.waitUntil(lambda: window.session.propagation is not None, timeout=60_000)
    result = compiled_in(qtbot, window)
    view = window.collectives
    grid = window.mesh_editor.grid
    by_axis = {}
    for axis in mesh.axis_names:
        by_axis[frozenset(frozenset(g) for g in device_groups(shuffled, (axis,)))] = axis
    seen = set()
    for row in range(view.compiled_table.rowCount()):
        click_table_row(qtbot, view.compiled_table, row)
        outlined = frozenset(frozenset(g) for g in grid.groups)
        assert outlined in by_axis, grid.groups
        seen.add(by_axis[outlined])
        # The dock and --json name the same axes.
        index = view.compiled_table.item(row, 0).data(Qt.ItemDataRole.UserRole)
        assert result.compiled_collectives[index].axes == (by_axis[outlined],)
    assert len(seen) == len(result.compiled_collectives)


def test_other_hardware_reprices_the_dock_and_is_remembered(make_window, qtbot):
    window = make_window("example:mlp")
    compiled_in(qtbot, window)
    view = window.collectives
    box = view.hardware
    assert box.currentData() == DEFAULT_PROFILE
    before = view.column("Est. time")
    assert all(t != "—" for t in before)
    line = view.meaning.text()
    box.setCurrentIndex(box.findData("h100"))
    assert view.column("Est. time") != before
    assert "NVIDIA H100" in view.meaning.text() and view.meaning.text() != line
    assert window.settings.hardware("?") == "h100"
    assert window.session.analysis.pricing.hardware == "h100"


def test_the_prediction_tab_flags_each_row_and_a_compile_error_is_one_line(make_window, qtbot):
    window = make_window("example:mlp")
    view = window.collectives
    result = compiled_in(qtbot, window)
    bar = view.tabs
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
    assert not view.showing_compiled
    assert view.column("Compiled") == [
        "matched" if m else "not compiled" for m in result.predicted_matched
    ]
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(0).center())
    assert view.showing_compiled
    # A compile that failed: one line, and the prediction labelled as such.
    failed = dataclasses.replace(result.propagation)
    window.session.set_propagation(failed)
    window.session.set_compiled(failed, NotCompiled("boom: no"))
    assert view.status.text() == "The XLA compile failed: boom: no"
    assert "Shardy's prediction (before compiling) — the compile failed" in view.header.text()
    assert not view.showing_compiled


def test_a_collective_explained_by_a_conflict_links_to_it_and_to_provenance(make_window, qtbot):
    window = make_window("example:conflict")
    result = compiled_in(qtbot, window)
    window.docks["dock_collectives"].raise_()
    view = window.collectives
    table = view.compiled_table
    (row,) = [
        r
        for r in range(table.rowCount())
        if result.compiled_collectives[table.item(r, 0).data(INDEX_ROLE)].cause.tensor == "y"
    ]
    cause = result.compiled_collectives[table.item(row, 0).data(INDEX_ROLE)].cause
    y = window.session.graph.value_by_name("y").id
    assert cause.value == y and cause.conflict is not None and cause.provenance is not None
    click_table_row(qtbot, table, row)
    # Its op and its tensor are both selected, the tensor in the inspector.
    selected = selected_graph_items(window)
    assert node_item(window, "add") in selected
    assert [i.value_id for i in selected if isinstance(i, BadgeItem)] == [y]
    assert window.selected_value == y
    assert view.explain.text().startswith(
        f"y: had {dims_text(cause.had)} → needed {dims_text(cause.needed)} · {cause.text}"
    )
    assert dims_text(cause.had) != dims_text(cause.needed)
    qtbot.mouseClick(view.conflict_button, Qt.MouseButton.LeftButton)
    assert not window.docks["dock_conflicts"].visibleRegion().isEmpty()
    assert window.conflicts.current() is result.conflicts[cause.conflict]
    window.docks["dock_collectives"].raise_()
    qtbot.mouseClick(view.provenance_button, Qt.MouseButton.LeftButton)
    assert not window.docks["dock_provenance"].visibleRegion().isEmpty()
    assert window.selected_value == cause.provenance


def test_hosts_mark_the_collectives_that_cross_and_say_the_host_warnings_once(make_window, qtbot):
    window = make_window("example:mlp")
    compiled_in(qtbot, window)
    view, editor = window.collectives, window.mesh_editor
    assert "Hosts" not in [
        view.compiled_table.horizontalHeaderItem(c).text()
        for c in range(view.compiled_table.columnCount())
        if not view.compiled_table.isColumnHidden(c)
    ]
    # 2 hosts in blocks of the device order: the all-reduce over model stays on a host,
    # and the dock follows at once, without propagating again
    count = window.propagation.count
    editor.hosts_spin.setValue(2)
    assert view.column("Hosts") == ["within"] and window.propagation.count == count
    assert view.traffic.text().startswith("On 2 hosts: 0 of 1 compiled collectives cross")
    # model across hosts: the new order propagates and compiles again; now it crosses
    editor.factor_spin(1).setValue(2)
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    result = compiled_in(qtbot, window)
    hosts = window.session.mesh_hosts()
    (c,) = result.compiled_collectives
    assert all(hosts.of_device(a) != hosts.of_device(b) for a, b in c.device_groups)
    assert view.column("Hosts") == ["crosses"]
    assert view.column("Across hosts") != ["0 B"]
    warned = [m for m in window.messages.messages("warning") if "crosses hosts" in m]
    assert len(warned) == 1
    # 4 hosts along data keep every model pair on one host
    assert warned[0].startswith("all-reduce over model (line 14")
    assert "--dcn data=4" in warned[0] and "keeps it within each host" in warned[0]
    view.hardware.setCurrentIndex(view.hardware.findData("h100"))  # repriced, said once
    assert [m for m in window.messages.messages("warning") if "crosses hosts" in m] == warned


def test_closing_the_window_leaves_nothing_listening_to_the_session(make_window):
    window = make_window("example:conflict")
    ev = window.session.events
    followed = (ev.propagation, ev.compiled, ev.priced, ev.hosts)
    assert all(len(signal) > 0 for signal in followed)
    window.close()
    # the docks, the pricing, the comparison and the revealing of rows all let go
    assert [len(signal) for signal in followed] == [0, 0, 0, 0]
