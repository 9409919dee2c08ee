"""Tables the docks share: a read-only table of rows (``row_table``), one built from
declared columns (``column_table``, ``set_row``), the roles its cells keep a row's index
and sort key under, and a cell that sorts by its key (bytes as numbers, not as text)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from shardscope.backend.columns import Column, column_names

# The row's index in the list the table shows (rows move when the user sorts).
INDEX_ROLE = Qt.ItemDataRole.UserRole
# What a cell sorts by, where its text would sort wrongly.
SORT_ROLE = Qt.ItemDataRole.UserRole + 1


class SortableItem(QTableWidgetItem):
    """A cell that sorts by ``SORT_ROLE`` when both cells have one, else by text."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        a, b = self.data(SORT_ROLE), other.data(SORT_ROLE)
        if a is not None and b is not None:
            return a < b
        return self.text() < other.text()


def row_table(
    columns: Sequence[str],
    parent: QWidget,
    resize: QHeaderView.ResizeMode = QHeaderView.ResizeMode.ResizeToContents,
) -> QTableWidget:
    """A table the user reads and chooses one row of: no cell edits, whole rows selected,
    no row numbers, the last column stretched, the others sized by ``resize``."""
    table = QTableWidget(0, len(columns), parent)
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(resize)
    header.setStretchLastSection(True)
    return table


def column_table(
    columns: Sequence[Column],
    parent: QWidget,
    resize: QHeaderView.ResizeMode = QHeaderView.ResizeMode.ResizeToContents,
) -> QTableWidget:
    """A ``row_table`` of ``columns``: their names as the header, their ``tooltip`` as
    the header's tooltips."""
    table = row_table(column_names(columns), parent, resize)
    for i, column in enumerate(columns):
        if column.tooltip:
            table.horizontalHeaderItem(i).setToolTip(column.tooltip)
    return table


def set_row(
    table: QTableWidget, r: int, columns: Sequence[Column], row: object, index: int, tip: str
) -> None:
    """Fill table row ``r`` with the cells of ``row``, one per column: each keeps
    ``index`` (the row's place in the list the table shows) and its column's sort key,
    and has its column's own tooltip for it, else ``tip``."""
    for col, column in enumerate(columns):
        item = SortableItem(column.cell(row))
        item.setData(INDEX_ROLE, index)
        key = column.sort_key(row)
        if key is not None:
            item.setData(SORT_ROLE, key)
        own = column.cell_tip(row)
        item.setToolTip(own if own is not None else tip)
        table.setItem(r, col, item)
