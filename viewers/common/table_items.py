"""Table cells the docks share: the roles they keep a row's index and sort key under, and
a cell that sorts by its key (bytes as numbers, not as text)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidgetItem

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
