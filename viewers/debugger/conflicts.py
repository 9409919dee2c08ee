"""The conflicts dock: every conflicting factor of the last propagation, and its factor
table.

A conflict is one factor of one op whose operands and results hold axes that are not
prefixes of one another (``backend.propagation.conflicts``). Selecting one shows, per
tensor of the op, what it proposed for the factor and where that came from, what the op
kept, the rule that decided, the reshard each loser needs to reach what was kept, and
the collectives Shardy's explicit-reshard passes really insert for the op, which may
differ from those reshards.

Given the session, the dock follows its propagation itself (``events.propagation``), and
``propagating`` says whether one is on its way while the session has none; ``detach``
stops following.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.propagation.conflicts import conflict_text, settling_steps
from shardscope.backend.propagation.predicted_collectives import collective_text
from shardscope.backend.sharding.spec import dims_text
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.graph.markers import CONFLICT_COLOR

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.session.document import Session

# What each rule of ``backend.propagation.conflicts`` means, in one sentence.
RULES = {
    "user priority": "a user priority (@pN) on one of the tensors decided: the "
    "highest-priority proposal wins",
    "closed dimension": "the result's dimension is closed, so it keeps the axes it has",
    "axis already used by another factor": "an axis shards at most one factor of a "
    "tensor, and another factor of the op already uses it",
    "non-divisible size": "an axis proposed does not divide the factor's size",
    "longest common prefix": "the proposals are incompatible, so the op keeps the longest "
    "prefix of axes they all share",
    "op priority": "Shardy propagates some ops in an earlier pass than others; the axes "
    "of the earlier pass were kept",
}
COLUMNS = ("Tensor", "Dims", "Proposes", "Origin", "Outcome", "Reshard to reach what was kept")
TENSOR_ROLE = Qt.ItemDataRole.UserRole


def tensor_name(graph: ProgramGraph | None, op: int, label: str) -> tuple[str, int | None]:
    """``("operand 0: sine %0", value id)`` for ``label`` (``operand-0``, ``result-1``)."""
    kind, _, index = label.partition("-")
    value = None
    if graph is not None and index.isdigit():
        ids = graph.ops[op].operands if kind == "operand" else graph.ops[op].results
        if int(index) < len(ids):
            value = ids[int(index)]
    name = graph.values[value].display_name if graph is not None and value is not None else ""
    return (f"{kind} {index}: {name}" if name else f"{kind} {index}"), value


def factor_rows(conflict: Conflict, graph: ProgramGraph | None) -> list[list[str]]:
    """The factor table's cells, one row per tensor of the op that has the factor."""
    proposals = {p.tensor: p for p in conflict.proposals}
    reshards = {r.tensor: r for r in conflict.reshards}
    rows = []
    for label, dims in conflict.dims.items():
        name, _ = tensor_name(graph, conflict.op, label)
        prop = proposals.get(label)
        axes = prop.axes if prop is not None else ()
        reshard = reshards.get(label)
        if reshard is None:
            outcome = f"keeps {dims_text([conflict.kept])}"
            to_reach = "none"
        else:
            outcome = "loses " + "+".join(reshard.from_axes) if reshard.from_axes else "gains"
            to_reach = (
                f"{dims_text([reshard.from_axes])} → {dims_text([reshard.to_axes])} "
                f"({reshard.kind})"
            )
        rows.append(
            [
                name,
                ", ".join(str(d) for d in dims),
                "+".join(axes) if axes else "nothing",
                prop.origin if prop is not None else "",
                outcome,
                to_reach,
            ]
        )
    return rows


def partitioner_text(conflict: Conflict, graph: ProgramGraph | None) -> str:
    """What Shardy's explicit-reshard passes insert for the op, and whether that differs
    from the reshards the table lists."""
    if not conflict.collectives:
        return "Shardy's explicit-reshard passes insert no collective for this op."
    parts = [collective_text(c, graph) for c in conflict.collectives]
    predicted = sorted({r.kind for r in conflict.reshards})
    inserted = sorted({c.kind for c in conflict.collectives})
    same = predicted == inserted
    note = (
        "the same kinds as the reshards above."
        if same
        else f"this differs from the reshards above ({', '.join(predicted) or 'none'})."
    )
    return "Shardy's explicit-reshard passes insert: " + "; ".join(parts) + f" — {note}"


class FactorTable(QTableWidget):
    """One conflict's factor table (see ``factor_rows``); a row's tensor id is in
    ``TENSOR_ROLE`` of its first cell."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)
        header = self.horizontalHeaderItem(5)
        header.setToolTip(
            "The reshard a tensor needs so that its axes for this factor become what the op "
            "kept (all_gather: drop trailing axes; all_slice: add axes; all_to_all: move an "
            "axis to another factor)"
        )

    def set_conflict(self, conflict: Conflict | None, graph: ProgramGraph | None) -> None:
        self.setRowCount(0)
        if conflict is None:
            return
        rows = factor_rows(conflict, graph)
        self.setRowCount(len(rows))
        loser = QColor(CONFLICT_COLOR)
        for r, (label, cells) in enumerate(zip(conflict.dims, rows, strict=True)):
            _, value = tensor_name(graph, conflict.op, label)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if c == 0:
                    item.setData(TENSOR_ROLE, value)
                if c == 4 and not text.startswith("keeps"):
                    item.setForeground(loser)
                self.setItem(r, c, item)

    def cell_text(self, row: int, column: int) -> str:
        item = self.item(row, column)
        return item.text() if item is not None else ""

    def full_width(self) -> int:
        """Width that shows every column's text whole without scrolling."""
        header = self.horizontalHeader()
        columns = sum(
            max(self.sizeHintForColumn(c), header.sectionSizeHint(c))
            for c in range(self.columnCount())
        )
        return columns + 2 * self.frameWidth() + 2

    def full_height(self) -> int:
        """Height that shows every row without scrolling."""
        return (
            self.horizontalHeader().height()
            + sum(self.rowHeight(r) for r in range(self.rowCount()))
            + 2 * self.frameWidth()
            + 2
        )


class ConflictsView(QWidget):
    """The conflicts dock; see the module docstring.

    ``opRequested(op)`` asks the window to select and reveal an op (on choosing a
    conflict), ``valueRequested(value)`` a tensor (on clicking a row of the table).
    """

    opRequested = Signal(int)
    valueRequested = Signal(int)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        session: Session | None = None,
        propagating: Callable[[], bool] = lambda: False,
    ) -> None:
        """``session``: follow its propagation; ``propagating()``: whether a propagation
        of its program is on its way while it has none (the status says so)."""
        super().__init__(parent)
        self.session = session
        self.propagating = propagating
        self.conflicts: list[Conflict] = []
        self.settled: list[int] = []  # rows highlighted as settled at the step shown
        self.settling: dict[int, list[int]] = {}  # step index -> conflicts settled there
        self.graph: ProgramGraph | None = None
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.list = QTreeWidget(self)
        self.list.setRootIsDecorated(False)
        self.list.setHeaderLabels(["Op", "Factor", "Proposals", "Kept", "Rule"])
        self.list.setUniformRowHeights(True)
        self.list.currentItemChanged.connect(self._on_current)
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = FactorTable(self)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.cellClicked.connect(self._on_cell)
        self.rule = QLabel(self)
        self.rule.setWordWrap(True)
        self.partitioner = QLabel(self)
        self.partitioner.setWordWrap(True)
        self.partitioner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        detail = QWidget(self)
        box = QVBoxLayout(detail)
        box.setContentsMargins(0, 0, 0, 0)
        for w in (self.title, self.table, self.rule, self.partitioner):
            box.addWidget(w)
        # The chosen conflict scrolls where the dock is shorter than it: its lines and
        # the table's rows keep their heights instead of being drawn over one another.
        self.detail = QScrollArea(self)
        self.detail.setWidget(detail)
        self.detail.setWidgetResizable(True)
        self.detail.setFrameShape(QFrame.Shape.NoFrame)
        # Side by side: the dock sits wide and short at the bottom of the window.
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.list)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        split.setSizes([350, 700])
        box.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self._links = Connections()
        if session is None:
            self.set_result(None)
        else:
            self._links.connect(session.events.propagation, self._on_propagation)
            self._on_propagation(session.propagation)

    def detach(self) -> None:
        """Stop following the session."""
        self._links.close()

    def _on_propagation(self, result: PropagationResult | None) -> None:
        session = self.session
        assert session is not None
        pending = result is None and session.program is not None and self.propagating()
        self.set_result(result, pending=pending)

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    def set_result(self, result: PropagationResult | None, *, pending: bool = False) -> None:
        """List the conflicts of ``result`` (None: propagation has not run or is stale;
        ``pending``: it is running)."""
        self.graph = result.graph if result is not None else None
        self.conflicts = list(result.conflicts) if result is not None else []
        self.list.blockSignals(True)
        self.list.clear()
        for i, c in enumerate(self.conflicts):
            props = " vs ".join("+".join(p.axes) for p in c.proposals)
            item = QTreeWidgetItem(
                [f"{c.op_name} (op {c.op})", c.factor, props, dims_text([c.kept]), c.rule]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            item.setToolTip(0, conflict_text(c))
            self.list.addTopLevelItem(item)
        self.list.blockSignals(False)
        self.settled = []
        self.settling = (
            settling_steps(result.conflicts, result.timeline, result.graph)
            if result is not None
            else {}
        )
        for col in range(self.list.columnCount()):
            self.list.resizeColumnToContents(col)
        n = len(self.conflicts)
        if result is None:
            self.status.setText(
                "Propagating…"
                if pending
                else "No propagation yet: propagate (F5) to find conflicts."
            )
        elif n == 0:
            self.status.setText(
                "No conflicts: on every op, the operands and results agree on each factor."
            )
        else:
            self.status.setText(
                f"{n} conflict{'s' if n != 1 else ''}: choose one to see its factor table."
            )
        self._show(None)

    def select(self, index: int) -> None:
        """Choose conflict ``index`` (as a click on its row does)."""
        self.list.setCurrentItem(self.list.topLevelItem(index))

    def show_step(self, index: int) -> None:
        """Highlight the conflicts settled at timeline step ``index`` (-1: none)."""
        self.mark_settled(self.settling.get(index, []))

    def mark_settled(self, indices: list[int]) -> None:
        """Highlight the rows of conflicts ``indices`` (settled at the step shown; [] for
        none) and show the first one's factor table, without moving the graph."""
        self.settled = [i for i in indices if 0 <= i < len(self.conflicts)]
        fill = self.palette().highlight().color()
        fill.setAlpha(70)
        for row in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(row)
            on = row in self.settled
            for col in range(self.list.columnCount()):
                item.setBackground(col, fill if on else QBrush())
                font = item.font(col)
                font.setBold(on)
                item.setFont(col, font)
        if self.settled:
            item = self.list.topLevelItem(self.settled[0])
            self.list.blockSignals(True)
            self.list.setCurrentItem(item)
            self.list.blockSignals(False)
            self.list.scrollToItem(item)
            self._show(self.conflicts[self.settled[0]])

    def current(self) -> Conflict | None:
        item = self.list.currentItem()
        return self.conflicts[item.data(0, Qt.ItemDataRole.UserRole)] if item else None

    def _on_current(self, item, _previous) -> None:
        if item is None:
            self._show(None)
            return
        conflict = self.conflicts[item.data(0, Qt.ItemDataRole.UserRole)]
        self._show(conflict)
        self.opRequested.emit(conflict.op)

    def _show(self, conflict: Conflict | None) -> None:
        self.table.set_conflict(conflict, self.graph)
        # Every row of a usual op (two operands, a result) and every column without
        # scrolling the table: the detail around it scrolls instead.
        table = self.table
        shown = min(table.full_height(), 6 * 30)
        bar = table.verticalScrollBar().sizeHint().width() if shown < table.full_height() else 0
        table.setFixedHeight(shown)
        table.setMinimumWidth(table.full_width() + bar)
        visible = conflict is not None
        for w in (self.table, self.rule, self.partitioner):
            w.setVisible(visible)
        if conflict is None:
            self.title.setText(
                "Choose a conflict to see its factor table." if self.conflicts else ""
            )
            return
        self.title.setText(conflict_text(conflict))
        self.rule.setText(f"Rule: {conflict.rule}: {RULES.get(conflict.rule, '')}")
        self.partitioner.setText(partitioner_text(conflict, self.graph))

    def _on_cell(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        value = item.data(TENSOR_ROLE) if item is not None else None
        if value is not None:
            self.valueRequested.emit(int(value))


def conflict_sheet(conflicts: list[Conflict], graph: ProgramGraph | None, width: int) -> QWidget:
    """A picture of every conflict's factor table, one under another (``render --view
    conflicts``)."""
    sheet = QWidget()
    layout = QVBoxLayout(sheet)
    layout.setContentsMargins(12, 12, 12, 12)
    layout.setSpacing(6)
    if not conflicts:
        layout.addWidget(QLabel("No conflicts: on every op, the operands and results agree."))
    for c in conflicts:
        title = QLabel(conflict_text(c))
        bold = title.font()
        bold.setBold(True)
        title.setFont(bold)
        title.setWordWrap(True)
        table = FactorTable()
        table.set_conflict(c, graph)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.resizeColumnsToContents()
        table.setFixedHeight(table.full_height())
        rule = QLabel(f"Rule: {c.rule}: {RULES.get(c.rule, '')}")
        rule.setWordWrap(True)
        inserts = QLabel(partitioner_text(c, graph))
        inserts.setWordWrap(True)
        for w in (title, table, rule, inserts):
            layout.addWidget(w)
        layout.addSpacing(10)
    height = layout.heightForWidth(width) if layout.hasHeightForWidth() else -1
    sheet.resize(width, max(height, sheet.sizeHint().height()))
    return sheet
