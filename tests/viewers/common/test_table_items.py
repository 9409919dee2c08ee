"""Sortable table cells: by their key where they have one, else by text."""

from shardscope.viewers.common.table_items import SORT_ROLE, SortableItem


def test_cells_sort_by_their_key_then_by_text(qtbot):
    small, big = SortableItem("900 B"), SortableItem("1.2 KiB")
    small.setData(SORT_ROLE, 900)
    big.setData(SORT_ROLE, 1200)
    assert small < big and not big < small  # as text, "900 B" > "1.2 KiB"
    assert SortableItem("a") < SortableItem("b")
    assert not SortableItem("b") < big  # one side has no key: by text, "b" > "1.2 KiB"
    assert not SortableItem("z") < SortableItem("a")


def test_a_row_table_is_read_and_chosen_a_whole_row_at_a_time(qtbot):
    from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QWidget

    from shardscope.viewers.common.table_items import row_table

    parent = QWidget()
    qtbot.addWidget(parent)
    table = row_table(("Kind", "Bytes"), parent, QHeaderView.ResizeMode.Interactive)
    assert [table.horizontalHeaderItem(i).text() for i in range(2)] == ["Kind", "Bytes"]
    assert table.editTriggers() == QAbstractItemView.EditTrigger.NoEditTriggers
    assert table.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows
    assert table.selectionMode() == QAbstractItemView.SelectionMode.SingleSelection
    assert table.verticalHeader().isHidden()
    header = table.horizontalHeader()
    assert header.stretchLastSection()
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.Interactive
