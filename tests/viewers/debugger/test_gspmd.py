"""The GSPMD dock says where the comparison stands, lists the values that differ and
counts each partitioner's compiled collectives."""

from PySide6.QtCore import Qt

from shardscope.backend.gspmd.compare import Difference
from shardscope.backend.run.result import CompiledCollective
from shardscope.viewers.debugger.gspmd import OFF_TEXT, GspmdView


def test_states_and_rows(qtbot):
    widget = GspmdView()
    qtbot.addWidget(widget)
    widget.show()
    assert widget.state == "off" and widget.status.text() == OFF_TEXT
    widget.set_waiting()
    assert widget.status.text().startswith("Waiting for propagation")
    widget.set_running()
    assert widget.state == "running"
    diff = Difference(
        3,
        None,
        "result[0]",
        "result",
        [[], []],
        "{replicated}",
        [["data"], []],
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
    )
    widget.set_differences([diff])
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
    widget.set_shardy(shardy)
    assert widget.count_texts()[0] == ["all-gather", "0", "1"]
    widget.set_running()
    assert widget.count_texts() == []
