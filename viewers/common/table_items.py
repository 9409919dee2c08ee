"""Tables the docks share: a read-only table of rows (``row_table``), the roles its cells
keep a row's index and sort key under, and a cell that sorts by its key (bytes as
numbers, not as text)."""

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
