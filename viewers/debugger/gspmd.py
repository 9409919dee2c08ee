"""The GSPMD dock: the values whose final sharding differs between GSPMD and Shardy, and
the collectives each partitioner's compiled module holds, counted per kind.

The window runs the comparison (``backend.gspmd.compare``) in the background and tells
this view where it stands: off, running, done (with the differences and GSPMD's compiled
collectives, beside Shardy's from the propagation's compile) or failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.sharding.spec import dims_text

if TYPE_CHECKING:
    from shardscope.backend.gspmd.compare import Difference
    from shardscope.backend.run.result import CompiledCollective

COLUMNS = ("Tensor", "Shardy", "GSPMD", "GSPMD HLO sharding")
COUNT_COLUMNS = ("Compiled", "Shardy", "GSPMD")
COUNTS_TIP = (
    "Instructions of each kind in the partitioned, optimized module each partitioner "
    "compiled (fake CPU devices); a combined one counts once. –: that compile's "
    "collectives are not there (still compiling, failed, or the mesh is too large)."
)
NOT_THERE = "–"
OFF_TEXT = "Off: View ▸ Compare with GSPMD runs XLA's GSPMD propagation on this program."


class GspmdView(QWidget):
    """The GSPMD dock; ``valueSelected(value)`` when the user picks a row."""

    valueSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.differences: list[Difference] = []
        self._gspmd: list[CompiledCollective] | None = None
        self.state = "off"
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.counts = QTableWidget(0, len(COUNT_COLUMNS), self)
        self.counts.setHorizontalHeaderLabels(COUNT_COLUMNS)
        self.counts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.counts.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.counts.verticalHeader().setVisible(False)
        self.counts.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.counts.setToolTip(COUNTS_TIP)
        self._fit_counts()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        row = QHBoxLayout()
        row.addWidget(self.table, 1)
        row.addWidget(self.counts)
        layout.addLayout(row, 1)
        self.set_off()

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    def set_off(self) -> None:
        self._fill([])
        self.state = "off"
        self.status.setText(OFF_TEXT)

    def set_running(self) -> None:
        self._fill([])
        self.state = "running"
        self.status.setText("Compiling the program with GSPMD to compare…")

    def set_waiting(self) -> None:
        """On, but there is no propagation result to compare with yet."""
        self._fill([])
        self.state = "waiting"
        self.status.setText("Waiting for propagation: the comparison runs on its result.")

    def set_failed(self, message: str) -> None:
        self._fill([])
        self.state = "failed"
        self.status.setText(f"The GSPMD comparison failed: {message}")

    def set_differences(
        self,
        differences: Sequence[Difference],
        gspmd: Sequence[CompiledCollective] | None = None,
        shardy: Sequence[CompiledCollective] | None = None,
    ) -> None:
        """The comparison's differences; ``gspmd`` and ``shardy`` the collectives of each
        partitioner's compiled module (None: not compiled)."""
        self._fill(list(differences))
        self._gspmd = None if gspmd is None else list(gspmd)
        self._count(self._gspmd, shardy)
        self.state = "done"
        n = len(differences)
        self.status.setText(
            f"GSPMD shards {n} value{'s' if n != 1 else ''} differently from Shardy "
            "(marked in purple on the graph)."
            if n
            else "GSPMD and Shardy agree on every value."
        )

    def _fill(self, differences: list[Difference]) -> None:
        self.differences = differences
        self.counts.setRowCount(0)
        t = self.table
        t.blockSignals(True)
        t.clearContents()
        t.setRowCount(len(differences))
        for r, d in enumerate(differences):
            cells = [d.display_name, dims_text(d.shardy), dims_text(d.gspmd), d.gspmd_text]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setData(Qt.ItemDataRole.UserRole, d.id)
                t.setItem(r, c, item)
        t.blockSignals(False)

    def _count(
        self,
        gspmd: Sequence[CompiledCollective] | None,
        shardy: Sequence[CompiledCollective] | None,
    ) -> None:
        per = [None if cs is None else Counter(c.kind for c in cs) for cs in (shardy, gspmd)]
        kinds = sorted(set().union(*(k for k in per if k is not None)))
        t = self.counts
        t.setRowCount(len(kinds))
        for r, kind in enumerate(kinds):
            cells = [kind] + [NOT_THERE if k is None else str(k[kind]) for k in per]
            for c, text in enumerate(cells):
                t.setItem(r, c, QTableWidgetItem(text))
        self._fit_counts()

    def _fit_counts(self) -> None:
        """As wide as its columns: the counts sit beside the differences, never cut."""
        t = self.counts
        t.resizeColumnsToContents()
        header = t.horizontalHeader()
        width = sum(header.sectionSize(c) for c in range(t.columnCount()))
        t.setMinimumWidth(width + 2 * t.frameWidth() + t.verticalScrollBar().sizeHint().width())

    def set_shardy(self, shardy: Sequence[CompiledCollective] | None) -> None:
        """Shardy's compiled collectives arrived (or changed) for the result compared."""
        if self.state == "done":
            self._count(self._gspmd, shardy)

    def row_texts(self) -> list[list[str]]:
        t = self.table
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]

    def count_texts(self) -> list[list[str]]:
        """The counts table: kind, Shardy's compiled count, GSPMD's."""
        t = self.counts
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            self.valueSelected.emit(int(items[0].data(Qt.ItemDataRole.UserRole)))
