"""The collectives dock: each collective Shardy inserts for the propagated program, sortable,
with totals by kind.

Bytes per device follow ``backend.propagation.collectives.bytes_per_device``: with ``S``
the bytes of the collective's result one device holds and ``N`` the devices of one
group, an all-gather moves ``S(N-1)/N``, an all-reduce ``2S(N-1)/N``, a reduce-scatter
``S(N-1)``, an all-to-all ``S(N-1)/N``, a collective-permute ``S``, an all-slice nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from shardscope.viewers.common.table_items import INDEX_ROLE, SORT_ROLE, SortableItem
from shardscope.viewers.graph.markers import byte_text, dims_text

if TYPE_CHECKING:
    from shardscope.backend.propagation.collectives import Collective
    from shardscope.backend.propagation.result import PropagationResult

COLUMNS = ("Kind", "Axes", "Group", "Tensor", "Op", "Bytes / device")
BYTES_COLUMN = 5
# What "bytes per device" counts for each kind (S: bytes of the result one device holds,
# N: devices in one group).
BYTES_MEANING = {
    "all_gather": "S·(N-1)/N: each device receives the N-1 pieces it lacks",
    "all_slice": "0: each device keeps a slice of what it holds",
    "all_reduce": "2·S·(N-1)/N: a ring reduce-scatter then all-gather",
    "reduce_scatter": "S·(N-1): each device sends N-1 of its N pieces of the input",
    "all_to_all": "S·(N-1)/N: each device keeps one of N pieces and sends the rest",
    "collective_permute": "S: each device sends its whole shard to another",
}
BYTES_HEADER_TIP = (
    "Bytes one device sends or receives for the collective. S = bytes of the result one "
    "device holds, N = devices in one group (the product of the sizes of its axes).\n"
    + "\n".join(f"{kind}: {text}" for kind, text in BYTES_MEANING.items())
)

BYTES_LINE = (
    "Bytes / device, with S a device's share of the result and N the devices of a group: "
    "all_gather S(N-1)/N · all_reduce 2S(N-1)/N · reduce_scatter S(N-1) · all_to_all "
    "S(N-1)/N · collective_permute S · all_slice 0"
)


def totals_by_kind(collectives: list[Collective]) -> dict[str, tuple[int, int]]:
    """Per kind: how many collectives and their bytes per device added up."""
    out: dict[str, tuple[int, int]] = {}
    for c in collectives:
        n, b = out.get(c.kind, (0, 0))
        out[c.kind] = (n + 1, b + c.bytes_per_device)
    return out


HEADER = "Shardy's prediction (before compiling)"


class CollectivesView(QWidget):
    """The collectives dock; ``collectiveSelected(index)`` gives the index in
    ``result.collectives`` of the row the user chose."""

    collectiveSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.collectives: list[Collective] = []
        # What the dock lists is Shardy's explicit-reshard prediction, not the compiled
        # program's collectives (``propagate --json``'s ``collectives``).
        self.header = QLabel(f"<b>{HEADER}</b>", self)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeaderItem(BYTES_COLUMN).setToolTip(BYTES_HEADER_TIP)
        self.table.horizontalHeaderItem(2).setToolTip("Devices in one group of the collective")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        # The costliest first.
        self.table.sortByColumn(BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.groups = QLabel(self)
        self.groups.setWordWrap(True)
        self.groups.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # What "bytes / device" counts, always in sight above the table.
        self.meaning = QLabel(BYTES_LINE, self)
        self.meaning.setWordWrap(True)
        self.meaning.setToolTip(BYTES_HEADER_TIP)
        self.totals = QLabel(self)
        self.totals.setWordWrap(True)
        self.totals.setToolTip(BYTES_HEADER_TIP)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.status)
        layout.addWidget(self.meaning)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.groups)
        layout.addWidget(self.totals)
        self.set_result(None)

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    def set_result(self, result: PropagationResult | None, *, pending: bool = False) -> None:
        """List the collectives of ``result`` (None: none yet)."""
        self.collectives = list(result.collectives) if result is not None else []
        graph = result.graph if result is not None else None
        table = self.table
        table.blockSignals(True)
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(self.collectives))
        for r, c in enumerate(self.collectives):
            tensor = graph.values[c.value].display_name if graph and c.value is not None else ""
            op = f"{c.op_name} (op {c.op})" if c.op is not None else "return"
            cells = [
                (c.kind, None),
                ("+".join(c.axes) or "—", None),
                (str(c.group_size), c.group_size),
                (tensor, None),
                (op, c.op if c.op is not None else -1),
                (byte_text(c.bytes_per_device), c.bytes_per_device),
            ]
            for col, (text, key) in enumerate(cells):
                item = SortableItem(text)
                item.setData(INDEX_ROLE, r)
                if key is not None:
                    item.setData(SORT_ROLE, key)
                tip = f"{c.kind} → {dims_text(c.out_spec)}; bytes per device = "
                item.setToolTip(tip + BYTES_MEANING.get(c.kind, "?"))
                table.setItem(r, col, item)
        table.setSortingEnabled(True)
        table.blockSignals(False)
        n = len(self.collectives)
        if result is None:
            self.status.setText(
                "Propagating…"
                if pending
                else "No propagation yet: propagate (F5) to predict collectives."
            )
        elif n == 0:
            self.status.setText("Shardy inserts no collective: nothing moves between devices.")
        else:
            self.status.setText(
                f"{n} collective{'s' if n != 1 else ''} Shardy inserts before compiling "
                "(choose one to outline its device groups on the mesh)."
            )
        self.groups.setText("")
        totals = totals_by_kind(self.collectives)
        parts = [f"{k} {n}× {byte_text(b)}" for k, (n, b) in sorted(totals.items())]
        total = sum(b for _, b in totals.values())
        self.totals.setText(
            ("Per device: " + " · ".join(parts) + f" — total {byte_text(total)}") if parts else ""
        )

    def show_groups(self, index: int, groups: list[tuple[int, ...]]) -> None:
        """Say which device groups collective ``index`` runs in (outlined on the mesh)."""
        c = self.collectives[index]
        if not groups:
            self.groups.setText("")
            return
        shown = " ".join("{" + ", ".join(map(str, g)) + "}" for g in groups[:16])
        more = f" … {len(groups) - 16} more" if len(groups) > 16 else ""
        self.groups.setText(
            f"{c.kind} over {'+'.join(c.axes) or 'no axis'}: {len(groups)} group"
            f"{'s' if len(groups) != 1 else ''} of {len(groups[0])} devices, outlined on "
            f"the mesh: {shown}{more}"
        )

    def select(self, index: int) -> None:
        """Choose the row of ``result.collectives[index]``."""
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(INDEX_ROLE) == index:
                self.table.selectRow(r)
                return

    def row_texts(self) -> list[list[str]]:
        """The cells as shown, top to bottom."""
        t = self.table
        return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            self.collectiveSelected.emit(int(items[0].data(INDEX_ROLE)))
