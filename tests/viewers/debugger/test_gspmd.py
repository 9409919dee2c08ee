"""The GSPMD dock says where the comparison stands, lists the values that differ and
counts each partitioner's compiled collectives."""

from PySide6.QtCore import Qt

from shardscope.backend.gspmd.compare import Difference
from shardscope.backend.run.result import CompiledCollective
from shardscope.viewers.common.partitioners import Partitioners
from shardscope.viewers.debugger.gspmd import OFF_TEXT, ON_PANES, GspmdView


def _difference() -> Difference:
    return Difference(
        3,
        None,
        "result[0]",
        "result",
        [[], []],
        "{replicated}",
        [["data"], []],
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
    )


def test_states_and_rows(qtbot):
    widget = GspmdView()
    qtbot.addWidget(widget)
    widget.show()
    assert widget.state == "off" and widget.status.text() == OFF_TEXT
    widget.set_waiting()
    assert widget.status.text().startswith("Waiting for propagation")
    widget.set_running()
    assert widget.state == "running"
    widget.set_differences([_difference()])
    assert widget.row_texts() == [
        ["result[0]", "[_, _]", "[data, _]", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"]
    ]
    assert widget.status.text().startswith("GSPMD shards 1 value differently")
    rect = widget.table.visualItemRect(widget.table.item(0, 1))
    with qtbot.waitSignal(widget.valueSelected) as chosen:
        qtbot.mouseClick(widget.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert chosen.args == [3]
    widget.set_differences([])
    assert widget.status.text() == "GSPMD and Shardy agree on every value."
    widget.set_failed("the GSPMD compile crashed")
    assert widget.state == "failed" and widget.table.rowCount() == 0
    assert widget.status.text() == "The GSPMD comparison failed: the GSPMD compile crashed"


def _collective(kind: str) -> CompiledCollective:
    return CompiledCollective(kind, ((0, 1),), (4,), 16, "jit(f)/add", 3, ())


def test_compiled_collectives_are_counted_per_kind_beside_shardys(qtbot):
    widget = GspmdView()
    qtbot.addWidget(widget)
    gspmd = [_collective("all-reduce"), _collective("all-reduce"), _collective("all-gather")]
    shardy = [_collective("all-reduce"), _collective("all-to-all")]
    widget.set_differences([], gspmd, shardy)
    assert widget.count_texts() == [
        ["all-gather", "0", "1"],
        ["all-reduce", "1", "2"],
        ["all-to-all", "1", "0"],
    ]
    widget.set_differences([], gspmd, None)
    assert widget.count_texts()[0] == ["all-gather", "–", "1"]
    widget.set_compiled(shardy, "shardscope")
    assert widget.count_texts()[0] == ["all-gather", "0", "1"]
    widget.set_running()
    assert widget.count_texts() == []
    widget.set_compiled(shardy, "shardscope")
    assert widget.count_texts() == []  # no comparison shown to count beside


def _headers(table) -> list[str]:
    return [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]


def test_a_torch_xla_programs_sides_say_whose_each_is(qtbot):
    widget = GspmdView()
    qtbot.addWidget(widget)
    assert _headers(widget.table)[1:3] == ["Shardy", "GSPMD"]
    assert _headers(widget.counts) == ["Compiled", "Shardy", "GSPMD"]
    widget.set_names(Partitioners("torch_xla", "gspmd"))
    assert _headers(widget.table)[1:3] == [
        "Shardy (shardscope's comparison)",
        "GSPMD (torch_xla's partitioner)",
    ]
    # As the script ran it, the compile is torch_xla's own; the comparison's GSPMD
    # compile is shardscope's recompile.
    widget.set_differences(
        [], [_collective("all-reduce")], [_collective("all-reduce")] * 3, compiled_by="torch_xla"
    )
    assert _headers(widget.counts) == [
        "Compiled",
        "torch_xla\n(GSPMD)",
        "GSPMD\n(shardscope's recompile)",
    ]
    assert widget.count_texts() == [["all-reduce", "3", "1"]]
    assert "torch_xla's own compiled module" in widget.counts.horizontalHeaderItem(1).toolTip()
    assert widget.status.text() == (
        "GSPMD (torch_xla's partitioner) and Shardy (shardscope's comparison) agree on every value."
    )
    # an edit: shardscope compiles the program itself, with Shardy
    widget.set_compiled([_collective("all-reduce")], "shardscope")
    assert _headers(widget.counts)[1] == "Shardy\n(shardscope's comparison)"
    widget.set_differences([_difference()], marked=ON_PANES)
    assert widget.status.text() == (
        "GSPMD (torch_xla's partitioner) shards 1 value differently from Shardy "
        "(shardscope's comparison) (marked in both side-by-side panes)."
    )
    # Before the propagation's compile arrives, its column names no partitioner: it may
    # be torch_xla's own GSPMD compile; the GSPMD column says whose compile it reads.
    widget.set_differences([], [_collective("all-reduce")])
    assert widget.count_texts() == [["all-reduce", "–", "1"]]
    assert _headers(widget.counts)[1] == "Compile\n(not there yet)"
    assert "not there yet" in widget.counts.horizontalHeaderItem(1).toolTip()
    assert widget.table.horizontalHeaderItem(2).toolTip() == (
        "Its final sharding after GSPMD's propagation (torch_xla's partitioner), in "
        "shardscope's recompile of the module torch_xla built"
    )
