"""The collectives dock: rows, sorting, totals by kind, the bytes header and selection."""

from PySide6.QtCore import QPoint, Qt

from shardscope.backend.propagation.collectives import Collective
from shardscope.viewers.debugger.collectives import (
    BYTES_COLUMN,
    CollectivesView,
    totals_by_kind,
)
from tests.support.compile_oracle import propagated


def view(qtbot) -> CollectivesView:
    widget = CollectivesView()
    qtbot.addWidget(widget)
    widget.resize(900, 300)
    widget.show()
    return widget


def test_rows_start_costliest_first_and_sort_by_a_header_click(qtbot):
    widget = view(qtbot)
    widget.set_result(propagated("example:conflict"))
    assert widget.row_texts() == [
        ["all_gather", "data", "4", "result[0]", "return", "1.5 KiB"],
        ["collective_permute", "data", "2", "y", "stablehlo.add (op 1)", "512 B"],
        ["all_slice", "data:(1)2", "2", "y", "stablehlo.add (op 1)", "0 B"],
    ]
    header = widget.table.horizontalHeader()
    x = header.sectionViewportPosition(BYTES_COLUMN) + 5
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert [r[5] for r in widget.row_texts()] == ["0 B", "512 B", "1.5 KiB"]
    assert widget.totals.text() == (
        "Per device: all_gather 1× 1.5 KiB · all_slice 1× 0 B · collective_permute 1× 512 B"
        " — total 2.0 KiB"
    )


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


def test_choosing_a_row_gives_its_index_in_the_result(qtbot):
    result = propagated("example:conflict")
    widget = view(qtbot)
    widget.set_result(result)
    rect = widget.table.visualItemRect(widget.table.item(0, 0))
    with qtbot.waitSignal(widget.collectiveSelected) as chosen:
        qtbot.mouseClick(widget.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert result.collectives[chosen.args[0]].kind == "all_gather"
    widget.show_groups(chosen.args[0], [(0, 2, 4, 6), (1, 3, 5, 7)])
    assert widget.groups.text() == (
        "all_gather over data: 2 groups of 4 devices, outlined on the mesh: "
        "{0, 2, 4, 6} {1, 3, 5, 7}"
    )


def test_empty_states(qtbot):
    widget = view(qtbot)
    assert widget.status.text().startswith("No propagation yet")
    widget.set_result(None, pending=True)
    assert widget.status.text() == "Propagating…"
    result = propagated("example:mlp")
    result_without = type(result)(**{**result.__dict__, "collectives": []})
    widget.set_result(result_without)
    assert widget.status.text().startswith("Shardy inserts no collective")
    assert widget.table.rowCount() == 0 and widget.totals.text() == ""


def test_totals_add_up_by_kind():
    c = [
        Collective(1, "a", "all_reduce", ("data",), None, (), 100, 4),
        Collective(2, "b", "all_reduce", ("data",), None, (), 50, 4),
        Collective(3, "c", "all_gather", ("model",), None, (), 7, 2),
    ]
    assert totals_by_kind(c) == {"all_reduce": (2, 150), "all_gather": (1, 7)}


def test_the_dock_says_it_lists_shardys_prediction(qtbot):
    widget = CollectivesView()
    qtbot.addWidget(widget)
    assert "Shardy's prediction (before compiling)" in widget.header.text()
