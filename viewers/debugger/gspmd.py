"""The GSPMD dock: the values whose final sharding differs between GSPMD and Shardy, and
the collectives each compiled module holds, counted per kind.

The window runs the comparison (``backend.gspmd.compare``) in the background and tells
this view where it stands: off, running, done (with the differences and GSPMD's compiled
collectives, beside those of the propagation's compile) or failed. Its headers and lines
name the two sides as ``set_names`` says (``viewers.common.partitioners``): for a
torch_xla capture the propagation's compile is torch_xla's own, with GSPMD, and the
comparison's GSPMD compile is shardscope's recompile of the same module.
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
from shardscope.viewers.common.partitioners import JAX, Partitioners, own_compile

if TYPE_CHECKING:
    from shardscope.backend.gspmd.compare import Difference
    from shardscope.backend.run.result import CompiledCollective

COUNTS_TIP = (
    "Instructions of each kind in each partitioned, optimized module; a combined one "
    "counts once. –: that compile's collectives are not there (still compiling, failed, "
    "or the mesh is too large)."
)
NOT_THERE = "–"
# the counts' middle header while the propagation's compile is not there
PENDING = "Compile (not there yet)"
OFF_TEXT = "Off: View ▸ Compare with GSPMD runs XLA's GSPMD propagation on this program."
# Where the values that differ are marked: the toggle's graph marks, or the panes alone.
ON_GRAPH = "marked in purple on the graph"
ON_PANES = "marked in both side-by-side panes"


def columns(names: Partitioners) -> tuple[str, ...]:
    """The differences table's headers."""
    return ("Tensor", names.shardy, names.gspmd, "GSPMD HLO sharding")


def count_columns(names: Partitioners, compiled_by: str | None) -> tuple[str, ...]:
    """The counts table's headers: the kind, the propagation's compile (``compiled_by``,
    ``Analysis.compiled_by``) and the comparison's GSPMD compile, who compiled it on a
    line of its own (the table keeps narrow)."""
    heads = (names.compiled(compiled_by), names.gspmd_compile)
    if compiled_by is None and names.foreign:
        # whose compile it will be (the framework's own or shardscope's) is not known yet
        heads = (PENDING, heads[1])
    return ("Compiled", *(h.replace(" (", "\n(", 1) for h in heads))


def count_tips(names: Partitioners, compiled_by: str | None) -> tuple[str, ...]:
    """What each counts column counts."""
    if own_compile(compiled_by):
        compiled = f"{compiled_by}'s own compiled module, as the script ran it (its XLA dump)"
    elif compiled_by is None and names.foreign:
        compiled = (
            f"the propagation's compile, not there yet: {names.framework}'s own where the "
            "capture holds it and the shardings are as captured, else shardscope's"
        )
    else:
        compiled = "shardscope's compile of Shardy's propagation, on fake CPU devices"
    if names.foreign:
        gspmd = (
            f"the module {names.framework} built, with its shardings, compiled again by "
            "shardscope with GSPMD on fake CPU devices"
        )
    else:
        gspmd = "the program compiled with GSPMD on fake CPU devices"
    return ("The collective's kind", compiled, gspmd)


class GspmdView(QWidget):
    """The GSPMD dock; ``valueSelected(value)`` when the user picks a row."""

    valueSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.differences: list[Difference] = []
        self._gspmd: list[CompiledCollective] | None = None
        self.names = JAX
        self.compiled_by: str | None = None  # who compiled the counts' middle column
        self.marked = ON_GRAPH
        self.state = "off"
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 4, self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.counts = QTableWidget(0, 3, self)
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
        self._label()
        self.set_off()

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    def set_names(self, names: Partitioners) -> None:
        """Name the two sides as ``names`` does (the program's partitioners)."""
        self.names = names
        self._label()
        if self.state == "done":
            self.status.setText(self._done_text())

    def _label(self) -> None:
        """The tables' headers, with what each side is as their tooltips."""
        names = self.names
        if names.foreign:
            gspmd = (
                f"Its final sharding after GSPMD's propagation ({names.framework}'s "
                f"partitioner), in shardscope's recompile of the module {names.framework} built"
            )
        else:
            gspmd = "Its final sharding after GSPMD's propagation"
        tips = (
            "The value",
            "Its final sharding after shardscope's Shardy propagation",
            gspmd,
            "That sharding as XLA's HloSharding text",
        )
        for table, heads, head_tips in (
            (self.table, columns(names), tips),
            (
                self.counts,
                count_columns(names, self.compiled_by),
                count_tips(names, self.compiled_by),
            ),
        ):
            table.setHorizontalHeaderLabels(list(heads))
            for c, tip in enumerate(head_tips):
                table.horizontalHeaderItem(c).setToolTip(tip)
        self._fit_counts()

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
        compiled: Sequence[CompiledCollective] | None = None,
        *,
        compiled_by: str | None = None,
        marked: str = ON_GRAPH,
    ) -> None:
        """The comparison's differences; ``gspmd`` the collectives of its GSPMD compile,
        ``compiled`` those of the propagation's compile, which ``compiled_by`` compiled
        (None: not compiled); ``marked``: where the values that differ are marked."""
        self._fill(list(differences))
        self._gspmd = None if gspmd is None else list(gspmd)
        self.marked = marked
        self.set_compiled(compiled, compiled_by, done=True)
        self.state = "done"
        self.status.setText(self._done_text())

    def _done_text(self) -> str:
        n, names = len(self.differences), self.names
        if not n:
            return f"{names.gspmd} and {names.shardy} agree on every value."
        return (
            f"{names.gspmd} shards {n} value{'s' if n != 1 else ''} differently from "
            f"{names.shardy} ({self.marked})."
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
        compiled: Sequence[CompiledCollective] | None,
    ) -> None:
        per = [None if cs is None else Counter(c.kind for c in cs) for cs in (compiled, gspmd)]
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

    def set_compiled(
        self,
        collectives: Sequence[CompiledCollective] | None,
        compiled_by: str | None,
        *,
        done: bool = False,
    ) -> None:
        """The propagation's compiled collectives arrived (or changed) for the result
        compared, compiled by ``compiled_by``; ``done``: with the comparison itself."""
        if self.state != "done" and not done:
            return
        if compiled_by != self.compiled_by:
            self.compiled_by = compiled_by
            self._label()
        self._count(self._gspmd, collectives)

    def row_texts(self) -> list[list[str]]:
        t = self.table
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]

    def count_texts(self) -> list[list[str]]:
        """The counts table: kind, the propagation's compiled count, GSPMD's."""
        t = self.counts
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            self.valueSelected.emit(int(items[0].data(Qt.ItemDataRole.UserRole)))
