"""Propagation > Run on devices: the program runs in a worker on fake CPU devices and the Run
dock shows each device's shard and the compiled collectives; failures leave the session as
it was."""

import os
import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRect, Qt

from shardscope.app.window.docks import KEEP_BESIDE, graph_share
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.result import XlaWarningEntry
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.run.heatmap import color_of
from shardscope.viewers.run.run_panel import HINT, STALE
from shardscope.viewers.run.run_text import groups_text

HOSTILE = Path(__file__).resolve().parents[2] / "inputs" / "hostile"
RUN = ("&Propagation", "&Run on devices")


def state_of(window) -> tuple:
    """What a failed run must leave alone: specs, mesh, undo stack, title."""
    session = window.session
    return (
        dict(session.specs),
        session.mesh,
        window.qundo.count(),
        window.qundo.index(),
        window.windowTitle(),
    )


def test_running_mlp_shows_every_device_shard_and_collective(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp")
    wait_idle(window)
    panel = window.run.panel
    assert panel.status.text() == HINT
    pick(window, *RUN)
    assert window.run.busy_label.text() == "Running mlp on 8 devices… (Esc cancels)"
    assert window.run.busy.isVisible() and window.run.cancel_button.isVisible()
    assert window.docks["dock_run"].isVisible()
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    assert "CPU, 8 devices" in panel.summary.text()
    assert re.search(r"compile \d+\.\d+ s · run \d+\.\d+ ms", panel.summary.text())

    rows = {r[0]: r for r in panel.rows(panel.tensor_table)}
    name, shape, spec, error, replicas = rows["result[0]"]
    assert shape == "float32[32, 16]" and spec == "[data,_]"
    assert float(error) < 1e-4 and replicas == "yes"
    assert "x" in rows

    panel.select_tensor("result[0]")
    shards = panel.rows(panel.shard_table)
    assert [int(s[0]) for s in shards] == list(range(8))
    # data=4 splits the rows in four; the two model devices of a row hold the same piece
    assert [s[1] for s in shards[:4]] == ["[0:8, 0:16]", "[0:8, 0:16]", "[8:16, 0:16]"] + [
        "[8:16, 0:16]"
    ]
    assert shards[0][3] == shards[1][3] != shards[2][3]

    collectives = panel.rows(panel.collective_table)
    assert collectives, "the compiled mlp has a collective"
    assert all(r[5] for r in collectives)  # matched with a prediction, or "unmatched"
    _click_row(qtbot, panel.collective_table, 0)
    index = panel.collective_table.item(0, 0).data(0x0100)
    collective = window.run.panel.result.collectives[index]
    groups = [tuple(g) for g in collective.device_groups]
    assert groups
    assert window.mesh_editor.grid.groups == groups
    assert "outlined on the mesh and the heat maps" in panel.groups.text()
    heat = panel.heatmap
    assert heat.groups == groups
    assert heat.legend_text().startswith(f"Outlined: {collective.kind} device groups: g0 {{")
    image = heat.grab().toImage()
    for i, group in enumerate(groups):
        for device in group:
            corner = heat.group_rect(device).topLeft()
            assert image.pixelColor(corner).getRgb()[:3] == heat.group_color(i).getRgb()[:3]


@pytest.mark.parametrize("size", [(1400, 900), (1600, 1000)])
def test_after_a_run_the_run_dock_has_room_and_the_graph_keeps_half_the_window(
    make_window, qtbot, wait_idle, size
):
    window = make_window("example:mlp")
    window.resize(*size)
    wait_idle(window)
    docks = window.docks
    run = docks["dock_run"]
    shown = {n for n, d in docks.by_name.items() if d.isVisible()}
    before = run.height()
    assert before < 0.3 * window.height()
    window.activateWindow()
    qtbot.keyClick(window.graph, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    qtbot.waitUntil(lambda: not run.visibleRegion().isEmpty())
    qtbot.wait(20)
    assert run.height() >= before
    # The graph keeps half the window's height, and at 1600x1000 half its width too (the
    # side columns' 750 px leave a 1400-px window's graph a little less).
    width, height = graph_share(window)
    assert height >= 0.5, height
    if size == (1600, 1000):
        assert width >= 0.5, width
    panel = window.run.panel
    panel.select_tensor("result[0]")
    qtbot.wait(10)
    # The heat maps shrink to the room they get: the first row of devices' pictures is in
    # sight without scrolling, the rest a scroll away.
    heatmap = panel.heatmap
    port = panel.shard_tabs.currentWidget().viewport()
    first = heatmap.tile_rect(heatmap.device_order[0])
    assert port.rect().contains(QRect(heatmap.mapTo(port, first.topLeft()), first.size()))
    assert {n for n, d in docks.by_name.items() if d.isVisible()} == shown
    # The timeline gave some of its height and keeps its controls in sight.
    timeline = docks["dock_timeline"]
    assert timeline.height() >= KEEP_BESIDE
    play = window.timeline.panel.play_button
    assert not play.visibleRegion().isEmpty()
    # Choosing a collective outlines its groups on the mesh grid, scrolled into sight.
    grid = window.mesh_editor.grid
    _click_row(qtbot, panel.collective_table, 0)
    assert grid.groups and grid.groups == panel.heatmap.groups
    outlined = grid.outlined_rect({d for g in grid.groups for d in g})
    qtbot.waitUntil(lambda: outlined_in_sight(window, outlined))
    for name in ("dock_mesh", "dock_palette", "dock_program", "dock_tensor", "dock_timeline"):
        assert docks[name].height() >= docks[name].minimumSizeHint().height() > 0, name


def outlined_in_sight(window, rect) -> bool:
    """Whether ``rect`` of the mesh grid is inside every viewport it is shown through."""
    grid = window.mesh_editor.grid
    ports = [window.mesh_editor.scroll.viewport(), window.mesh_editor.parentWidget()]
    return all(
        port.rect().contains(QRect(grid.mapTo(port, rect.topLeft()), rect.size())) for port in ports
    )


def test_a_second_run_while_one_runs_is_refused(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    pick(window, *RUN)
    assert any("already in progress" in m for m in window.messages.messages("warning"))
    qtbot.waitUntil(lambda: not window.run.running, timeout=120_000)
    wait_idle(window)
    assert window.run.count == 1


def test_a_program_that_raises_at_run_time_leaves_the_session_alone(make_window, qtbot, pick):
    window = make_window(str(HOSTILE / "run_raises.py"))
    before = state_of(window)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.failures == 1, timeout=120_000)
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "run failed" in errors[0]
    assert "\n" not in errors[0]
    assert state_of(window) == before
    assert window.run.panel.result is None
    assert window.run.panel.status.text().startswith("The run failed")
    assert not window.run.running
    # shown where the user looks: the Run dock, on top, says why; the status bar sends
    # the user there
    dock = window.docks["dock_run"]
    qtbot.waitUntil(lambda: not dock.visibleRegion().isEmpty(), timeout=10_000)
    assert window.statusBar().currentMessage() == "the run failed: the Run dock says why"


def test_a_mesh_larger_than_the_devices_is_refused(make_window, qtbot, pick, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_RUN_CPU_DEVICES", "4")
    window = make_window("example:mlp", propagate=False)
    before = state_of(window)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.failures == 1, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert "needs 8 devices but 4 CPU devices can be attached" in error
    assert state_of(window) == before


def test_an_edit_marks_the_run_stale_until_the_next_run(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    assert panel.status.text() != STALE
    window.mesh_editor.meshEdited.emit(parse_mesh("data=2,model=2"))
    assert panel.status.text() == STALE
    assert panel.result is not None  # the old result stays shown, marked
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 2, timeout=120_000)
    assert panel.status.text() != STALE
    assert "4 devices" in panel.summary.text()
    window.qundo.undo()  # Edit > Undo
    assert panel.status.text() == STALE


def test_closing_during_a_run_ends_the_worker_at_once(make_window, qtbot, pick):
    window = make_window(str(HOSTILE / "run_hangs.py"), propagate=False)
    pick(window, *RUN)
    qtbot.wait(2000)  # the worker is compiling or hanging in the program
    assert window.run.running
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(0)


def _rows_of(table) -> dict[str, int]:
    return {table.item(r, 0).text(): r for r in range(table.rowCount())}


def _choose(qtbot, box, text: str) -> None:
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def _click_row(qtbot, table, row: int) -> None:
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_ctrl_r_then_choosing_an_output_draws_each_devices_values_and_its_reshard(
    make_window, qtbot, wait_idle
):
    window = make_window("example:mlp")
    wait_idle(window)
    window.activateWindow()
    qtbot.keyClick(window.graph, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    table = panel.tensor_table
    _click_row(qtbot, table, _rows_of(table)["result[0]"])
    assert panel.shard_tabs.tabText(panel.shard_tabs.currentIndex()) == "Heat maps"
    heat = panel.heatmap
    tensor = panel.result.tensor("result[0]")
    assert heat.tensor is tensor
    image = heat.grab().toImage()
    values = [v for s in tensor.shards for v in s.values]
    assert heat.scale == (min(values), max(values))
    for shard in tensor.shards:
        grid = np.array(shard.values).reshape(shard.values_shape)
        np.testing.assert_array_equal(heat.tiles[shard.device], grid)
        got = image.pixelColor(heat.value_at(shard.device, 3, 5).center())
        assert got.getRgb()[:3] == color_of(grid[3, 5], *heat.scale).getRgb()[:3]
    # data=4 down, model=2 across: devices 0 and 1 side by side, 2 below 0
    assert heat.tile_rect(0).y() == heat.tile_rect(1).y() < heat.tile_rect(2).y()
    assert heat.flagged == set()

    tabs = panel.shard_tabs
    qtbot.mouseClick(
        tabs.tabBar(), Qt.MouseButton.LeftButton, pos=tabs.tabBar().tabRect(2).center()
    )
    reshard = panel.reshard
    assert reshard.isVisible() and reshard.name == "result[0]"
    _choose(qtbot, reshard.source, "data,_")
    _choose(qtbot, reshard.target, "data,_")
    assert reshard.plan.kind == "free" and reshard.kind.text().startswith("Free")
    _choose(qtbot, reshard.target, "_,_")
    assert reshard.plan.kind == "traffic" and reshard.plan.bytes == 8 * 24 * 16 * 4
    qtbot.mouseClick(reshard.run_button, Qt.MouseButton.LeftButton)
    assert window.run.checking
    qtbot.waitUntil(lambda: not window.run.checking, timeout=120_000)
    assert reshard.check.text().startswith("Checked with jax.device_put on 8 devices"), (
        reshard.check.text()
    )


def test_differing_replicas_are_flagged_on_the_heat_maps(make_window, qtbot, pick):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    result = window.run.panel.result
    tensor = result.tensor("result[0]")
    shards = list(tensor.shards)
    values = list(shards[1].values)
    values[0] += 0.5
    shards[1] = replace(shards[1], values=tuple(values), checksum="00000000")
    broken = replace(tensor, shards=tuple(shards), replica_mismatches=((0, 1),))
    window.run.show_result(replace(result, outputs=[broken, *result.outputs[1:]]))
    panel = window.run.panel
    assert panel.status.text() == "Replicas differ in result[0]."
    panel.select_tensor("result[0]")
    assert panel.heatmap.flagged == {0, 1}
    (line,) = [x for x in panel.heatmap.lines if x.startswith("Devices")]
    assert line.startswith("Devices 0, 1 should hold the same piece [0:8, 0:16] but differ")
    assert line.endswith("max |difference| 0.5")


def test_an_xla_warning_marks_its_op_and_choosing_it_selects_the_op(make_window, qtbot, pick):
    window = make_window("example:mlp")
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    graph = window.session.graph
    # a warning about the op the compiled all-reduce serves (its HLO op_name, as XLA logs it)
    compiled = window.run.panel.result
    op_name = compiled.collectives[0].source
    op = next(o for o in graph.ops if o.location_name == op_name)
    message = "Involuntary full rematerialization of the operand"
    result = replace(
        compiled,
        warnings=[
            XlaWarningEntry("a warning about no op", "", ""),
            XlaWarningEntry(message, op_name, compiled.collectives[0].name),
        ],
    )
    window.run.show_result(result)
    marks = window.markers.warning_marks
    (node,) = marks
    assert message in marks[node].toolTip()
    assert window.graph.nodes[node].node.op in (op.id, *_ancestors(graph, op.id))

    panel = window.run.panel
    item = panel.warnings.item(1)
    rect = panel.warnings.visualItemRect(item)
    qtbot.mouseClick(panel.warnings.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    (selected,) = window.graph.scene().selectedItems()
    assert selected.node.op == op.id
    assert window.source_view.line == op.source_line

    item = panel.warnings.item(0)
    rect = panel.warnings.visualItemRect(item)
    qtbot.mouseClick(panel.warnings.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert any("names no op" in m for m in window.messages.messages("warning"))
    # a new program drops the marks
    window.open_program("example:conflict")
    qtbot.waitUntil(lambda: window.session.program.name == "conflict", timeout=60_000)
    assert window.markers.warnings == {}


def _ancestors(graph, op_id):
    out = []
    parent = graph.ops[op_id].parent
    while parent is not None:
        out.append(parent)
        parent = graph.ops[parent].parent
    return out


def test_a_failed_reshard_check_says_so_and_leaves_the_session_alone(
    make_window, qtbot, pick, monkeypatch
):
    import shardscope.backend.run.reshard as reshard_module

    def crash(*_args, **_kwargs):
        raise ShardscopeError("the reshard check crashed (exit code -9)")

    monkeypatch.setattr(reshard_module, "check_reshard", crash)
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    before = state_of(window)
    panel = window.run.panel
    panel.select_tensor("x")
    qtbot.mouseClick(panel.reshard.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.run.checking, timeout=30_000)
    assert panel.reshard.check.text() == (
        "The real move failed: the reshard check crashed (exit code -9)"
    )
    (error,) = window.messages.messages("error")
    assert error == "reshard check failed: the reshard check crashed (exit code -9)"
    assert state_of(window) == before
    assert panel.reshard.run_button.isEnabled()


def test_closing_during_a_reshard_check_ends_its_worker_at_once(make_window, qtbot, pick):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    panel.select_tensor("x")
    qtbot.mouseClick(panel.reshard.run_button, Qt.MouseButton.LeftButton)
    qtbot.wait(300)  # the worker is starting or importing JAX
    assert window.run.checking
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(0)


def test_running_again_after_an_edit_says_the_reference_was_kept(
    make_window, qtbot, pick, wait_idle, monkeypatch, tmp_path
):
    from shardscope.backend.run.reference_cache import KEPT

    monkeypatch.setenv("SHARDSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    window = make_window("example:mlp", propagate=False)

    def said() -> list[str]:
        return window.messages.messages("info")

    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    assert not any(KEPT in m for m in said())
    first = [r[3] for r in window.run.panel.rows(window.run.panel.tensor_table)]
    window.mesh_editor.meshEdited.emit(parse_mesh("data=2,model=4"))
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 2, timeout=120_000)
    assert any(KEPT in m for m in said())
    panel = window.run.panel
    assert "8 devices" in panel.summary.text()
    errors = [r[3] for r in panel.rows(panel.tensor_table)]
    assert len(errors) == len(first) and all(e != "—" and float(e) < 1e-4 for e in errors)


def test_the_run_dock_names_each_output_by_its_place_in_the_return_value(
    make_window, qtbot, pick, tmp_path
):
    path = tmp_path / "tree.py"
    path.write_text(
        "import jax, jax.numpy as jnp\n"
        "MESH = {'data': 2}\n"
        "SPECS = {'x': jax.P('data')}\n"
        "def PROGRAM(x):\n"
        "    return {'loss': x.sum(), 'grads': {'w': x * 2}}\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)\n"
    )
    window = make_window(str(path), propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    names = [r[0] for r in panel.rows(panel.tensor_table)]
    assert names[:2] == ["result[0] ['grads']['w']", "result[1] ['loss']"]
    assert "x" in names
    item = panel.tensor_table.item(0, 0)
    assert item.toolTip() == "result[0] is result['grads']['w'] of the function's return value"
    panel.select_tensor("result[0]")
    assert panel.shard_title.text().startswith("result[0] ['grads']['w']: 2 shards")


def test_a_callback_that_raises_shows_the_programs_own_error(make_window, qtbot, pick):
    window = make_window(str(HOSTILE / "run_callback_raises.py"), propagate=False)
    before = state_of(window)
    pick(window, *RUN)
    # XLA's CPU runtime would abort the worker 60 s after the callback raised
    qtbot.waitUntil(lambda: window.run.failures == 1, timeout=45_000)
    (error,) = window.messages.messages("error")
    # said once: "the run failed: ...py:10: RuntimeError: ...", never twice
    assert error.startswith("the run failed: ") and error.count("run failed") == 1
    assert "run_callback_raises.py:10: RuntimeError: the callback's own failure" in error
    assert "SIGABRT" not in error
    assert window.run.panel.status.text().startswith("The run failed: ")
    assert window.run.panel.status.text().count("run failed") == 1
    assert not window.run.cancel_button.isVisible()
    assert state_of(window) == before


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("how", ["dock", "status bar", "esc"])
def test_cancel_kills_the_run_and_leaves_everything_as_it_was(make_window, qtbot, pick, how):
    window = make_window(str(HOSTILE / "run_hangs.py"), propagate=False)
    panel = window.run.panel
    before, status = state_of(window), panel.status.text()
    assert not panel.cancel_button.isVisible() and not window.run.cancel_button.isVisible()
    pick(window, *RUN)
    assert panel.cancel_button.isVisible() and window.run.cancel_button.isVisible()
    assert window.run.busy.isVisible()
    qtbot.waitUntil(lambda: window.run._cancel._folder is not None, timeout=60_000)
    pid_file = window.run._cancel._folder / "pid"
    qtbot.waitUntil(pid_file.exists, timeout=60_000)
    pid = int(pid_file.read_text())
    qtbot.wait(1500)  # the worker compiles, or hangs in the program's callback
    assert window.run.running and _group_alive(pid)
    if how == "dock":
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    elif how == "status bar":
        qtbot.mouseClick(window.run.cancel_button, Qt.MouseButton.LeftButton)
    else:
        qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not window.run.running
    assert not panel.cancel_button.isVisible() and not window.run.busy.isVisible()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=10_000)
    # the worker and all it started (a killed child's zombie is reaped by init meanwhile)
    qtbot.waitUntil(lambda: not _group_alive(pid), timeout=5_000)
    assert state_of(window) == before
    assert panel.result is None and panel.status.text() == status
    assert window.messages.messages("error") == []
    assert any("run cancelled" in m for m in window.messages.messages("info"))
    assert window.run.failures == 0 and window.run.count == 0
    # the window runs again afterwards
    pick(window, *RUN)
    assert window.run.running
    assert window.run.cancel_run()


def test_a_warning_on_an_op_in_a_loop_body_marks_that_op(make_window, qtbot, pick):
    window = make_window("example:scan")
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    graph = window.session.graph
    # XLA names an op in a loop body from the top; the program names it within its body
    names = [o.location_name for o in graph.ops]
    op = next(
        o
        for o in graph.ops
        if o.parent is not None and o.location_name and names.count(o.location_name) == 1
    )
    op_name = f"jit(rnn)/while/body/closed_call/{op.location_name}"
    assert all(o.location_name != op_name for o in graph.ops)
    message = "Involuntary full rematerialization of the operand"
    result = replace(window.run.panel.result, warnings=[XlaWarningEntry(message, op_name, "x")])
    window.run.show_result(result)
    assert window.markers.warnings == {op.id: [message]}
    panel = window.run.panel
    rect = panel.warnings.visualItemRect(panel.warnings.item(0))
    qtbot.mouseClick(panel.warnings.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.source_view.line == op.source_line


def test_an_mlir_module_runs_on_seeded_inputs_from_the_run_action(make_window, qtbot, pick):
    mlir = Path(__file__).resolve().parents[2] / "inputs" / "mlir" / "sdy.mlir"
    window = make_window(str(mlir), propagate=False)
    assert window.session.program.kind == "mlir"
    pick(window, *RUN)
    assert window.run.busy_label.text() == (
        "Running the module of sdy on 8 devices, on seeded inputs… (Esc cancels)"
    )
    qtbot.waitUntil(lambda: window.run.count == 1 or window.run.failures, timeout=120_000)
    assert window.run.count == 1, window.messages.messages("error")
    panel = window.run.panel
    assert "CPU, 8 devices" in panel.summary.text()
    rows = {r[0]: r for r in panel.rows(panel.tensor_table)}
    assert rows["x"][2] == "[data,_]" and float(rows["result[1]"][3]) < 1e-5
    panel.select_tensor("x")
    shards = panel.rows(panel.shard_table)
    assert [int(s[0]) for s in shards] == list(range(8))
    assert [s[1] for s in shards[::2]] == ["[0:4, 0:32]", "[4:8, 0:32]", "[8:12, 0:32]"] + [
        "[12:16, 0:32]"
    ]
    assert panel.rows(panel.collective_table), "the module's sum over model is an all-reduce"
    notes = window.messages.messages("warning")
    assert any(n.startswith("run: the inputs are seeded, not the program's own") for n in notes)


HOSTS = Path(__file__).resolve().parents[2] / "inputs" / "hosts"


def test_a_run_on_two_hosts_shows_each_shards_host_and_the_collective_that_crosses(
    make_window, qtbot, pick, wait_idle
):
    window = make_window(str(HOSTS / "two_axes.py"))
    wait_idle(window)
    editor = window.mesh_editor
    editor.hosts_spin.setFocus()
    editor.hosts_spin.selectAll()
    qtbot.keyClicks(editor.hosts_spin, "2")
    qtbot.keyClick(editor.hosts_spin, Qt.Key.Key_Return)
    hosts = window.session.mesh_hosts()
    assert hosts.count == 2
    pick(window, *RUN)
    assert window.run.busy_label.text() == "Running two_axes on 8 devices on 2 hosts… (Esc cancels)"
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    result = panel.result
    assert result.hosts == 2 and "on 2 hosts (2 processes of 4 devices)" in panel.summary.text()
    panel.select_tensor("result[0]")
    shards = panel.rows(panel.shard_table)
    assert [(int(s[0]), s[1]) for s in shards] == [(d, f"h{hosts.of_device(d)}") for d in range(8)]
    assert panel.shard_title.text().endswith("on 2 hosts: h0: devices 0–3 · h1: devices 4–7")
    rows = panel.rows(panel.collective_table)
    by_groups = {r[2]: r[1] for r in rows}  # device groups: hosts
    for c in result.collectives:
        crosses = any(len({hosts.of_device(d) for d in g}) > 1 for g in c.device_groups)
        assert by_groups[groups_text(c.device_groups)] == ("crosses" if crosses else "within")
    assert {"crosses", "within"} <= set(by_groups.values())  # data crosses, model does not
    wait_idle(window)


def test_a_host_that_fails_is_one_line_in_the_run_dock_and_in_messages(
    make_window, qtbot, pick, wait_idle
):
    window = make_window(str(HOSTS / "raises.py"), propagate=False)
    window.mesh_editor.hosts_spin.setValue(2)
    state = state_of(window)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: not window.run.running, timeout=120_000)
    (error,) = window.messages.messages("error")
    assert error.startswith("the run failed: host 1 of 2") and "host 1 refuses to trace" in error
    assert "\n" not in error
    status = window.run.panel.status.text()
    assert status.startswith("The run failed: host 1 of 2") and window.run.panel.result is None
    assert state_of(window) == state
    wait_idle(window)
