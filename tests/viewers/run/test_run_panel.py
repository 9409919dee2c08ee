"""The Run dock shows a RunResult: summary, tensors with replica mismatches in red, each
device's shard of the chosen one, compiled collectives sortable by bytes, warnings, and a
stale mark after an edit."""

import pytest
from PySide6.QtCore import Qt

from shardscope.backend.run.result import (
    CompiledCollective,
    PredictedRef,
    RunResult,
    Shard,
    TensorRun,
    XlaWarningEntry,
)
from shardscope.viewers.common.table_items import INDEX_ROLE
from shardscope.viewers.run.run_panel import BYTES_COLUMN, HINT, MISMATCH, STALE, RunPanel


def shards(pieces: dict[int, tuple[int, int]], checksums: dict[int, str]) -> tuple[Shard, ...]:
    return tuple(
        Shard(d, (pieces[d], (0, 4)), (pieces[d][1] - pieces[d][0], 4), checksums[d])
        for d in sorted(pieces)
    )


def make_result() -> RunResult:
    rows = {0: (0, 4), 1: (0, 4), 2: (4, 8), 3: (4, 8)}
    good = TensorRun(
        "result[0]", (8, 4), "float32", "data,_", "", shards(rows, dict.fromkeys(rows, "aa")), 1e-7
    )
    bad = TensorRun(
        "x",
        (8, 4),
        "float32",
        "data,_",
        "",
        shards(rows, {0: "aa", 1: "bb", 2: "cc", 3: "cc"}),
        0.0,
        replica_mismatches=((0, 1),),
    )
    ref = PredictedRef("all-reduce", ("model",), 3, "jit(f)/dot_general", 12, 256)
    small = CompiledCollective("all-reduce", ((0, 1), (2, 3)), (4, 4), 64, "f/dot", 12, (ref,))
    big = CompiledCollective("all-gather", ((0, 2), (1, 3)), (8, 4), 4096, "f/add", 14, ())
    return RunResult(
        program="f",
        platform="cpu",
        device_count=4,
        mesh={"data": 2, "model": 2},
        outputs=[good],
        arguments=[bad],
        collectives=[small, big],
        predicted_only=[PredictedRef("all-gather", ("data",), 5, "jit(f)/mul", 20, 128)],
        warnings=[XlaWarningEntry("Involuntary full rematerialization", "f/add", "add.1")],
        compile_s=0.25,
        run_s=0.002,
        memory={"argument": 2048, "generated_code": 99},
        run_times=[0.002] * 5,
    )


@pytest.fixture
def panel(qtbot):
    view = RunPanel()
    qtbot.addWidget(view)
    view.resize(1000, 500)
    view.show()
    return view


def test_before_any_run_the_dock_says_how_to_run(panel):
    assert panel.status.text() == HINT
    assert not panel.body.isVisible()
    panel.set_stale(True)  # nothing to mark
    assert panel.status.text() == HINT


def test_a_result_shows_summary_tensors_and_mismatches_in_red(panel):
    panel.set_result(make_result())
    summary = panel.summary.text()
    assert "CPU, 4 devices (mesh data=2, model=2)" in summary
    assert "compile 0.250 s · run 2.000 ms (median of 5)" in summary
    assert "argument 2.0 KiB" in summary and "generated_code" not in summary
    rows = panel.rows(panel.tensor_table)
    assert rows[0] == ["result[0]", "float32[8, 4]", "[data,_]", "1.00e-07", "yes"]
    assert rows[1][0] == "x" and rows[1][4] == "no: devices 0,1"
    assert panel.tensor_table.item(1, 0).foreground().color() == MISMATCH
    assert panel.tensor_table.item(0, 0).foreground().color() != MISMATCH
    assert panel.status.text() == "Replicas differ in x."


def test_choosing_a_tensor_lists_its_shards(panel, qtbot):
    panel.set_result(make_result())
    assert panel.shard_table.rowCount() == 0
    panel.tensor_table.selectRow(1)
    assert panel.rows(panel.shard_table) == [
        ["0", "[0:4, 0:4]", "[4, 4]", "aa"],
        ["1", "[0:4, 0:4]", "[4, 4]", "bb"],
        ["2", "[4:8, 0:4]", "[4, 4]", "cc"],
        ["3", "[4:8, 0:4]", "[4, 4]", "cc"],
    ]
    assert panel.shard_title.text() == "x: 4 shards, one per device"


def test_a_shard_whose_tile_holds_padding_says_so(panel, qtbot):
    # 3 rows split 2 ways: device 1's tile of 2 rows holds row 2 and a row of padding.
    pieces = (
        Shard(0, ((0, 2), (0, 4)), (2, 4), "aa", padding=(0, 0)),
        Shard(1, ((2, 3), (0, 4)), (1, 4), "bb", padding=(1, 0)),
    )
    w = TensorRun("w", (3, 4), "float32", "data,_", "", pieces, 0.0)
    result = make_result()
    result.arguments.append(w)
    panel.set_result(result)
    panel.tensor_table.selectRow(2)
    assert panel.rows(panel.shard_table) == [
        ["0", "[0:2, 0:4]", "[2, 4]", "aa"],
        ["1", "[2:3, 0:4]", "[1, 4] (tile [2, 4] with padding 1 in dim 0)", "bb"],
    ]


def test_collectives_sort_by_bytes_and_selecting_one_names_its_groups(panel, qtbot):
    panel.set_result(make_result())
    table = panel.collective_table
    assert [r[5] for r in panel.rows(table)] == ["all-reduce model", "unmatched"]
    table.sortByColumn(BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
    assert [r[0] for r in panel.rows(table)] == ["all-gather", "all-reduce"]
    assert panel.rows(table)[0][1:5] == ["{0,2} {1,3}", "[8, 4]", "4.0 KiB", "f/add:14"]
    with qtbot.waitSignal(panel.collectiveSelected) as chosen:
        table.selectRow(0)
    assert chosen.args == [1]  # the index in result.collectives, not the row
    assert panel.groups.text() == (
        "all-gather: 2 groups, outlined on the mesh and the heat maps: {0,2} {1,3}"
    )
    assert panel.heatmap.groups == [(0, 2), (1, 3)]
    assert panel.heatmap.group_title == "all-gather"
    panel.set_result(make_result())
    assert panel.heatmap.groups == []
    assert "all-gather data at jit(f)/mul" in panel.predicted_only.text()
    assert panel.warnings.item(0).text() == "XLA: f/add: Involuntary full rematerialization"


def test_stale_until_a_new_result_and_a_failure_keeps_the_last_result(panel):
    panel.set_result(make_result())
    panel.set_stale(True)
    assert panel.status.text() == STALE
    panel.set_running("f on 4 devices")
    assert panel.status.text() == "Running f on 4 devices…"
    panel.set_failed("the run crashed")
    assert panel.status.text() == "The run failed: the run crashed"
    assert panel.tensor_table.rowCount() == 2
    panel.set_result(make_result())
    assert panel.status.text() != STALE and not panel.stale


def on_two_hosts(result: RunResult) -> RunResult:
    """``result`` as a run of 2 processes of 2 devices: shards of devices 2, 3 on host 1,
    the all-gather's groups ({0,2} {1,3}) crossing hosts."""
    from dataclasses import replace

    def hosted(t: TensorRun) -> TensorRun:
        return replace(t, shards=tuple(replace(s, host=s.device // 2) for s in t.shards))

    small, big = result.collectives
    return replace(
        result,
        hosts=2,
        outputs=[hosted(t) for t in result.outputs],
        arguments=[hosted(t) for t in result.arguments],
        collectives=[small, replace(big, crosses_hosts=True)],
    )


def test_a_run_on_two_hosts_names_each_shards_host_and_the_crossing_collective(panel):
    from shardscope.viewers.run.run_panel import CROSSING, HOSTS_COLUMN

    panel.set_result(make_result())
    one_host = panel.rows(panel.collective_table)
    assert all("crosses" not in r and "within" not in r for r in one_host)
    panel.set_result(on_two_hosts(make_result()))
    assert "on 2 hosts (2 processes of 2 devices)" in panel.summary.text()
    panel.select_tensor("result[0]")
    assert panel.rows(panel.shard_table) == [
        ["0", "h0", "[0:4, 0:4]", "[4, 4]", "aa"],
        ["1", "h0", "[0:4, 0:4]", "[4, 4]", "aa"],
        ["2", "h1", "[4:8, 0:4]", "[4, 4]", "aa"],
        ["3", "h1", "[4:8, 0:4]", "[4, 4]", "aa"],
    ]
    assert panel.shard_title.text().endswith("on 2 hosts: h0: devices 0,1 · h1: devices 2,3")
    assert panel.heatmap._label(2).startswith("h1 · 2 [4:8, 0:4]")
    rows = {r[0]: r for r in panel.rows(panel.collective_table)}
    assert rows["all-gather"][1] == "crosses" and rows["all-reduce"][1] == "within"
    table = panel.collective_table
    crossing = next(r for r in range(2) if table.item(r, 0).text() == "all-gather")
    assert table.item(crossing, HOSTS_COLUMN).foreground().color() == CROSSING
    assert "1 crossing hosts" in panel.groups.text()
    panel.select_collective(1)
    assert panel.groups.text().startswith("all-gather: 2 groups (crosses hosts), outlined")


def test_a_dock_given_the_session_and_selection_follows_them_until_detached(qtbot):
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.selection import Selection
    from shardscope.backend.sharding.mesh import parse_mesh

    session, selection = Session(), Selection()
    panel = RunPanel(session=session, selection=selection)
    qtbot.addWidget(panel)
    panel.set_result(make_result())
    session.set_mesh(parse_mesh("data=2,model=2"))
    assert panel.stale
    panel.collective_table.selectRow(0)
    chosen = panel.result.collectives[panel.collective_table.item(0, 0).data(INDEX_ROLE)]
    assert selection.device_groups == tuple(tuple(g) for g in chosen.device_groups)
    assert panel.session_spec("no such tensor") is None
    session.events.program.emit(None)  # a new program (none) clears the dock
    assert panel.result is None
    panel.detach()
    panel.set_result(make_result())
    session.set_mesh(parse_mesh("data=4"))
    assert not panel.stale
