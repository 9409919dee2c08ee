"""Rows chosen in the debugger's docks revealed, as a user meets them on example:conflict:
the conflict on the add marked, listed and explained, a predicted or compiled collective's
op and tensor selected on the graph and its device groups outlined on the mesh, and a
compiled collective's links to its conflict and to provenance."""

from PySide6.QtCore import Qt

from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.table_items import INDEX_ROLE
from shardscope.viewers.graph.items import BadgeItem
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
)
from tests.support.compile_oracle import compiled_text
from tests.support.debugger_window import (
    add_result,
    click_table_row,
    click_tree_row,
    compiled_in,
    marks,
    node_item,
    selected_graph_items,
)


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
    assert "2 groups of 4 devices" in view.detail.groups.text()
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
    assert f"groups of {len(c.device_groups[0])} devices" in view.detail.groups.text()


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
    assert view.detail.explain.text().startswith(
        f"y: had {dims_text(cause.had)} → needed {dims_text(cause.needed)} · {cause.text}"
    )
    assert dims_text(cause.had) != dims_text(cause.needed)
    qtbot.mouseClick(view.detail.conflict_button, Qt.MouseButton.LeftButton)
    assert not window.docks["dock_conflicts"].visibleRegion().isEmpty()
    assert window.conflicts.current() is result.conflicts[cause.conflict]
    window.docks["dock_collectives"].raise_()
    qtbot.mouseClick(view.detail.provenance_button, Qt.MouseButton.LeftButton)
    assert not window.docks["dock_provenance"].visibleRegion().isEmpty()
    assert window.selected_value == cause.provenance
