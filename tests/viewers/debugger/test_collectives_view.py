"""The collectives dock: the compiled program's collectives against XLA's own compile, the
prediction with its matched flags, compiling and failed states, the had → needed line,
sorting, totals by kind, the bytes header and selection."""

import dataclasses
import functools

from PySide6.QtCore import QPoint, Qt

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.cost.price import price_compiled
from shardscope.backend.cost.traffic import apply_host_layout
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.propagation.predicted_collectives import Collective
from shardscope.backend.run.compiled import COMPILE_CANCELLED
from shardscope.backend.run.result import NotCompiled
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.units import bytes_text
from shardscope.viewers.debugger.collective_columns import (
    BYTES_COLUMN,
    COMPILED_BYTES_COLUMN,
    COMPILED_COLUMNS,
    HOSTS_COLUMN,
    TIME_COLUMN,
    time_text,
    totals_by_kind,
)
from shardscope.viewers.debugger.collectives_view import CROSSING, PREDICTED_TAB, CollectivesView
from tests.support.compile_oracle import compiled_text, loaded, propagated


@functools.cache
def compiled(source: str):
    """``analyse`` of a loaded program, once per test session."""
    return analyse(loaded(source))


def view(qtbot) -> CollectivesView:
    widget = CollectivesView()
    qtbot.addWidget(widget)
    widget.resize(1200, 400)
    widget.show()
    return widget


def click_row(qtbot, table, row: int) -> None:
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_compiled_rows_are_xlas_own_collectives(qtbot):
    for source in ("example:conflict", "example:mlp"):
        widget = view(qtbot)
        narrow = widget.minimumSizeHint().width()
        widget.set_result(compiled(source))
        # the longer header is cut at the dock's edge, never widens the dock
        assert widget.minimumSizeHint().width() == narrow
        expected = read_collectives(compiled_text(loaded(source)))
        rows = widget.row_texts()
        # Hosts and Across hosts are hidden on one host.
        assert widget.showing_compiled and len(rows[0]) == len(COMPILED_COLUMNS) - 2
        kind, operands = COMPILED_COLUMNS.index("Kind"), COMPILED_COLUMNS.index("Operands")
        assert sorted((r[kind], int(r[operands])) for r in rows) == sorted(
            (c["kind"], c["operands"]) for c in expected
        ), source
        assert "compiled program's collectives" in widget.header.text()
        assert "8 fake CPU devices" in widget.header.text()
        # Each row names its op and the user's line.
        assert all(" (op " in op for op in widget.column("Op"))
        assert all(".py:" in line for line in widget.column("Line"))
        assert widget.memory.text().startswith("Memory per device, XLA's CPU buffer assignment")
        peak = bytes_text(compiled(source).memory["peak"])
        assert f"peak {peak}" in widget.memory.text()


def test_rows_start_costliest_first_and_totals_add_up_per_kind(qtbot):
    result = compiled("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    moved = [
        bytes_text(c.bytes) for c in sorted(result.compiled_collectives, key=lambda c: -c.bytes)
    ]
    assert widget.column("Bytes / device") == moved
    header = widget.compiled_table.horizontalHeader()
    x = header.sectionViewportPosition(COMPILED_BYTES_COLUMN) + 5
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert widget.column("Bytes / device") == moved[::-1]
    total = sum(c.bytes for c in result.compiled_collectives)
    n = len(result.compiled_collectives)
    assert widget.totals.text() == (
        f"Per device per call: all-gather {n}× {bytes_text(total)} — total {bytes_text(total)}"
    )


def test_other_hardware_changes_the_time_cells_and_cost_lines_only(qtbot):
    result = compiled("example:mlp")
    widget = view(qtbot)
    v5e = price_compiled(result.propagation, result.compile, "tpu-v5e")
    widget.set_result(result, pricing=v5e)
    before = widget.row_texts()
    assert widget.column("Est. time") == [time_text(c.seconds_per_call) for c in v5e.collectives]
    assert v5e.formulas in widget.meaning.text() and v5e.label in widget.meaning.text()
    assert f", {v5e.memory.text}" in widget.memory.text()
    assert f"est. step {time_text(v5e.step_seconds)} on {v5e.label}" in widget.totals.text()
    item = widget.compiled_table.item(0, 0)
    h100 = price_compiled(result.propagation, result.compile, "h100")
    widget.set_pricing(h100)
    # The same cells, not new ones, and only the time column changed.
    assert widget.compiled_table.item(0, 0) is item
    after = widget.row_texts()
    time = COMPILED_COLUMNS.index("Est. time")
    assert [r[:time] + r[time + 1 :] for r in after] == [r[:time] + r[time + 1 :] for r in before]
    assert widget.column("Est. time") == [time_text(c.seconds_per_call) for c in h100.collectives]
    assert widget.column("Est. time") != [time_text(c.seconds_per_call) for c in v5e.collectives]
    assert h100.label in widget.meaning.text() and f", {h100.memory.text}" in widget.memory.text()


def test_the_prediction_stays_a_tab_away_each_row_flagged(qtbot):
    result = compiled("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    widget.tabs.setCurrentIndex(PREDICTED_TAB)
    assert not widget.showing_compiled
    assert "Shardy's prediction (before compiling)" in widget.header.text()
    flags = {None: "—", True: "matched", False: "not compiled"}
    by_kind = dict(zip(widget.column("Kind"), widget.column("Compiled"), strict=True))
    assert by_kind == {
        c.kind: flags[m] for c, m in zip(result.collectives, result.predicted_matched, strict=True)
    }
    matched = [m for m in result.predicted_matched if m is not None]
    assert f"{sum(matched)} of {len(matched)} matched by a compiled one" in widget.status.text()
    # The compiled program's again, and the choice stays for the next result.
    widget.tabs.setCurrentIndex(0)
    assert widget.showing_compiled
    widget.tabs.setCurrentIndex(PREDICTED_TAB)
    widget.set_result(compiled("example:mlp"))
    assert not widget.showing_compiled and widget.column("Compiled") == ["matched"]


def test_while_compiling_the_prediction_is_shown_labelled(qtbot):
    widget = view(qtbot)
    widget.set_result(Analysis(propagated("example:conflict")), compiling=True)
    assert not widget.showing_compiled
    assert not widget.tabs.isTabEnabled(0)
    assert "Shardy's prediction (before compiling) — compiling…" in widget.header.text()
    assert widget.row_texts() == [
        ["all_gather", "data", "4", "result[0]", "return", "1.5 KiB", "—"],
        ["collective_permute", "data", "2", "y", "stablehlo.add (op 1)", "512 B", "—"],
        ["all_slice", "data:(1)2", "2", "y", "stablehlo.add (op 1)", "0 B", "—"],
    ]
    header = widget.table.horizontalHeader()
    x = header.sectionViewportPosition(BYTES_COLUMN) + 5
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert [r[5] for r in widget.row_texts()] == ["0 B", "512 B", "1.5 KiB"]
    assert widget.totals.text() == (
        "Per device: all_gather 1× 1.5 KiB · all_slice 1× 0 B · collective_permute 1× 512 B"
        " — total 2.0 KiB"
    )


def test_a_compile_error_is_one_line_and_the_prediction_stays(qtbot):
    failed = Analysis(
        propagated("example:conflict"), NotCompiled("the XLA compile timed out after 300 s")
    )
    widget = view(qtbot)
    widget.set_result(failed, compiling=True)
    assert widget.status.text() == "The XLA compile timed out after 300 s"  # said once
    assert "Shardy's prediction (before compiling) — the compile failed" in widget.header.text()
    assert len(widget.row_texts()) == len(failed.collectives)
    # An error of several lines still takes one.
    failed = failed.with_parts(
        compile=NotCompiled("the XLA compile failed: TypeError: bad\n    arguments:\n 1. x")
    )
    widget.set_result(failed)
    assert "\n" not in widget.status.shown_text
    assert widget.status.height() == widget.meaning.height()


def test_a_cancelled_compile_says_how_to_compile_again(qtbot):
    cancelled = Analysis(propagated("example:conflict"), NotCompiled(COMPILE_CANCELLED))
    widget = view(qtbot)
    widget.set_result(cancelled, compiling=True)
    assert "— compile cancelled" in widget.header.text()
    assert "propagate again (F5)" in widget.status.text()


def test_a_chosen_collective_shows_the_two_shardings_and_its_links(qtbot):
    result = compiled("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    causes = [c.cause for c in result.compiled_collectives]
    assert sorted(widget.column("Tensor")) == sorted(c.tensor for c in causes)
    assert sorted(widget.column("Cause")) == sorted(c.text for c in causes)
    with qtbot.waitSignal(widget.compiledSelected) as chosen:
        click_row(qtbot, widget.compiled_table, 0)
    cause = causes[chosen.args[0]]
    widget.show_compiled(chosen.args[0], [(0, 2, 4, 6), (1, 3, 5, 7)])
    assert widget.detail.explain.text() == (
        f"{cause.tensor}: had {dims_text(cause.had)} → needed {dims_text(cause.needed)} · "
        f"{cause.text}"
    )
    assert f"line {cause.line}" in widget.detail.explain.text()
    assert "2 groups of 4 devices, outlined on the mesh" in widget.detail.groups.text()
    assert widget.detail.conflict_button.isVisible() and widget.detail.provenance_button.isVisible()
    with qtbot.waitSignal(widget.conflictRequested) as asked:
        qtbot.mouseClick(widget.detail.conflict_button, Qt.MouseButton.LeftButton)
    assert asked.args == [cause.conflict]
    with qtbot.waitSignal(widget.provenanceRequested) as asked:
        qtbot.mouseClick(widget.detail.provenance_button, Qt.MouseButton.LeftButton)
    assert asked.args == [cause.provenance]


def test_an_unexplained_collective_says_so(qtbot):
    widget = view(qtbot)
    result = compiled("example:mlp")
    bare = tuple(dataclasses.replace(c, cause=None) for c in result.compiled.collectives)
    plain = Analysis(result.propagation, dataclasses.replace(result.compile, collectives=bare))
    widget.set_result(plain)
    assert set(widget.column("Cause")) == {"—"}
    widget.show_compiled(0, [])
    assert "why it is there is not worked out" in widget.detail.explain.text()
    assert not widget.detail.conflict_button.isVisible()


def test_the_bytes_header_says_what_each_kind_counts(qtbot):
    widget = view(qtbot)
    tip = widget.table.horizontalHeaderItem(BYTES_COLUMN).toolTip()
    for kind in (
        "all_gather",
        "all_slice",
        "all_reduce",
        "reduce_scatter",
        "all_to_all",
        "collective_permute",
    ):
        assert kind + ":" in tip
    assert "S = bytes of the result one device holds" in tip
    assert widget.meaning.isVisible() and "all_reduce 2S(N-1)/N" in widget.meaning.text()


def test_choosing_a_predicted_row_gives_its_index_in_the_result(qtbot):
    result = Analysis(propagated("example:conflict"))
    widget = view(qtbot)
    widget.set_result(result)
    with qtbot.waitSignal(widget.collectiveSelected) as chosen:
        click_row(qtbot, widget.table, 0)
    assert result.collectives[chosen.args[0]].kind == "all_gather"
    widget.show_groups(chosen.args[0], [(0, 2, 4, 6), (1, 3, 5, 7)])
    assert widget.detail.groups.text() == (
        "all_gather over data: 2 groups of 4 devices, outlined on the mesh: "
        "{0, 2, 4, 6} {1, 3, 5, 7}"
    )


def test_empty_states(qtbot):
    widget = view(qtbot)
    assert widget.status.text().startswith("No propagation yet")
    widget.set_result(None, pending=True)
    assert widget.status.text() == "Propagating…"
    result = Analysis(propagated("example:mlp"))
    widget.set_result(Analysis(dataclasses.replace(result.propagation, collectives=())))
    assert widget.status.text().startswith("Shardy inserts no collective")
    assert widget.table.rowCount() == 0 and widget.totals.text() == ""
    widget.set_result(result, note="Not compiled: the mesh has 4096 devices")
    assert "— not compiled" in widget.header.text()
    assert widget.status.text() == "Not compiled: the mesh has 4096 devices"


def test_totals_add_up_by_kind():
    c = [
        Collective(1, "a", "all_reduce", ("data",), None, (), 100, 4),
        Collective(2, "b", "all_reduce", ("data",), None, (), 50, 4),
        Collective(3, "c", "all_gather", ("model",), None, (), 7, 2),
    ]
    assert totals_by_kind(c) == {"all_reduce": (2, 150), "all_gather": (1, 7)}


def test_times_read_in_their_unit():
    assert [time_text(s) for s in (4e-7, 1.23e-5, 4.5e-3, 1.2, None)] == [
        "400 ns",
        "12.3 µs",
        "4.50 ms",
        "1.20 s",
        "—",
    ]


def test_on_several_hosts_each_row_says_whether_it_crosses_and_the_bytes_across(qtbot):
    from shardscope.backend.cost.traffic import apply_host_layout
    from shardscope.backend.sharding.hosts import Hosts

    widget = view(qtbot)
    result = compiled("example:mlp")  # one all-reduce over model: devices {0,1} {2,3} ...
    for count, crosses in ((2, "within"), (8, "crosses")):
        traffic, pricing = apply_host_layout(result.propagation, result.compile, Hosts(count, 8))
        laid = result.with_parts(traffic=traffic, pricing=pricing)
        widget.set_result(laid, pricing=pricing)
        rows = widget.row_texts()
        assert len(rows[0]) == len(COMPILED_COLUMNS)  # the host columns are shown
        assert widget.column("Hosts") == [crosses]
        moved = pricing.collectives[0]
        assert (moved.bytes_across_hosts > 0) == (crosses == "crosses")
        assert widget.column("Across hosts") == [bytes_text(moved.bytes_across_hosts)]
        assert widget.traffic.text().startswith(
            f"On {count} hosts: {int(crosses == 'crosses')} of 1 compiled collectives cross"
        )
        line = widget.traffic.text()
        fast = pricing.links[0].name
        if crosses == "crosses":
            # every collective crosses: no within-hosts traffic on the fast link claimed
            assert f"across hosts {bytes_text(pricing.step_bytes_across_hosts)}" in line
            assert line.endswith("none stays within hosts") and f"({fast}," not in line
        else:
            assert "across hosts" not in line.split(" · ", 1)[1]
            assert f"within hosts {bytes_text(pricing.step_bytes_within_hosts)} ({fast}, " in line
    assert widget.compiled_table.item(0, HOSTS_COLUMN).foreground().color() == CROSSING
    widget.show_prediction(True)
    assert widget.column("Hosts") == ["crosses"] and len(widget.row_texts()[0]) == 8
    widget.set_result(result)  # one host: the columns and the line are gone
    assert widget.traffic.text() == "" and len(widget.row_texts()[0]) == 7


def test_a_dock_given_the_session_follows_its_analysis_until_detached(qtbot):
    source = "example:conflict"
    analysis = compiled(source)
    result = analysis.propagation
    session = Session()
    session.set_program(loaded(source))
    widget = CollectivesView(session=session)
    qtbot.addWidget(widget)
    widget.resize(1200, 400)
    widget.show()
    session.set_propagation(result)  # no controller pushes it: the dock hears it
    assert widget.result is session.analysis and widget.compiling
    assert "compiling…" in widget.header.text() and not widget.showing_compiled
    session.set_compiled(result, analysis.compile)
    assert widget.showing_compiled and not widget.compiling
    assert widget.compiled == list(analysis.compiled_collectives)
    assert widget.pricing is None
    priced = {
        name: apply_host_layout(result, analysis.compile, session.mesh_hosts(), name)
        for name in ("tpu-v5e", "h100")
    }
    session.set_priced(result, *priced["tpu-v5e"])
    assert widget.pricing is priced["tpu-v5e"][1]
    widget.show_compiled(0, [])  # the row chosen, explained below the table
    tip = widget.compiled_table.item(0, TIME_COLUMN).toolTip()
    assert widget.chosen == 0 and widget.detail.explain.text()
    session.set_priced(result, *priced["h100"])  # another hardware: the prices only
    assert widget.pricing is priced["h100"][1] and widget.chosen == 0
    assert widget.compiled_table.item(0, TIME_COLUMN).toolTip() != tip
    widget.detach()
    for signal in (session.events.propagation, session.events.compiled, session.events.priced):
        assert len(signal) == 0  # the dock was their only listener
    session.set_propagation(None)
    assert widget.showing_compiled and widget.result is not None


def test_a_combined_collective_explains_each_operand_and_says_forward_or_backward(qtbot):
    from tests.support.inputs import PROGRAMS

    result = compiled(str(PROGRAMS / "explain_moe.py"))
    widget = view(qtbot)
    widget.set_result(result)
    rows = list(widget.compiled)
    # The Pass column tells a gradient's collectives from the forward ones.
    passes = widget.column("Pass")
    assert {"forward", "backward"} <= set(passes)
    combined = next(i for i, c in enumerate(rows) if c.cause.kind == "combined")
    assert widget.column("Origin")[combined] == "mixed"
    assert "1 combining the user's and the partitioner's" in widget.status.text()
    assert widget.column("Tensor")[combined] == f"{rows[combined].operands} tensors"
    table = widget.compiled_table
    # The one all-reduce: XLA combined the user's pmean with the partitioner's loss mean.
    (row,) = [r for r in range(table.rowCount()) if table.item(r, 0).text() == "all-reduce"]
    with qtbot.waitSignal(widget.compiledSelected) as chosen:
        click_row(qtbot, table, row)
    assert chosen.args[0] == combined
    widget.show_compiled(combined, [])
    c = rows[combined]
    text = widget.detail.explain.text()
    assert text.startswith(f"XLA combined {c.operands} all-reduces into one:")
    lines = text.splitlines()[1:]
    assert len(lines) == c.operands
    for j, (t, line) in enumerate(zip(c.tensors, lines, strict=True)):
        assert line.startswith(f"[{j}] {t.origin}, {t.direction}: ")
        assert t.cause.text in line
        # The user's pmean is its line, no shardings to compare.
        assert ("not known" in line) is False
    assert {t.origin for t in c.tensors} == {"user", "partitioner"}
