"""The collectives dock: the compiled program's collectives, each explained and priced, and
Shardy's prediction before compiling, each flagged matched or not.

Once XLA compiled the propagated program (``result.compiled_collectives``), the dock lists
one row per compiled collective instruction: kind, mesh axes, group size, operands, the
tensor it moves, its op and line, why it is there, bytes per device, the estimated time on
the chosen hardware, whether the user wrote it or the partitioner inserted it, and
whether Shardy's prediction has it. While the compile runs, or where it failed, the dock
shows the prediction, labelled as such. The prediction stays one click away either way.

On a mesh laid over several hosts (``result.hosts``, set by ``cost.traffic``) each row
says whether its device groups cross hosts (``crosses``, in the warning colour) or stay
within one, a compiled row the bytes one call sends across hosts (summed over all
devices, from the pricing), and a line below the table the bytes per step within and
across hosts and the seconds on each link; on one host those columns are hidden.

Bytes per device follow ``backend.propagation.collectives.bytes_per_device``: with ``S``
the bytes of the collective's result one device holds and ``N`` the devices of one
group, an all-gather moves ``S(N-1)/N``, an all-reduce ``2S(N-1)/N``, a reduce-scatter
``S(N-1)``, an all-to-all ``S(N-1)/N``, a collective-permute ``S``, an all-slice nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTabBar,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.run.compiled import COMPILE_CANCELLED
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.units import bytes_text, seconds_text
from shardscope.viewers.common.table_items import INDEX_ROLE, SORT_ROLE, SortableItem, row_table

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.collectives import Collective
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.result import CompiledCollective

PREDICTED_COLUMNS = (
    "Kind",
    "Axes",
    "Group",
    "Tensor",
    "Op",
    "Bytes / device",
    "Compiled",
    "Hosts",
)
BYTES_COLUMN = 5
# The cost first (in sight in a narrow dock), the cause last (it takes what is left).
COMPILED_COLUMNS = (
    "Kind",
    "Axes",
    "Group",
    "Operands",
    "Bytes / device",
    "Est. time",
    "Hosts",
    "Across hosts",
    "Tensor",
    "Op",
    "Line",
    "Origin",
    "Prediction",
    "Cause",
)
COMPILED_BYTES_COLUMN = COMPILED_COLUMNS.index("Bytes / device")
TIME_COLUMN = COMPILED_COLUMNS.index("Est. time")
CAUSE_COLUMN = COMPILED_COLUMNS.index("Cause")
# The columns shown only on a mesh laid over several hosts.
HOSTS_COLUMN = COMPILED_COLUMNS.index("Hosts")
ACROSS_COLUMN = COMPILED_COLUMNS.index("Across hosts")
PREDICTED_HOSTS_COLUMN = PREDICTED_COLUMNS.index("Hosts")
CROSSES, WITHIN = "crosses", "within"
CROSSING = QColor("#C26A00")  # the crossing rows' Hosts cell, readable on light and dark
# The tabs above the table.
COMPILED_TAB, PREDICTED_TAB = 0, 1
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

HEADER = "Shardy's prediction (before compiling)"
COMPILED_HEADER = "The compiled program's collectives (XLA's SPMD partitioner)"
NOT_EXPLAINED = "—"
MEMORY_LABEL = "Memory per device, XLA's CPU buffer assignment"
# ``memory`` keys shown, with the words for them.
MEMORY_PARTS = (
    ("argument", "arguments"),
    ("output", "outputs"),
    ("temp", "temporaries"),
    ("peak", "peak"),
)


class CollectiveCost(Protocol):
    """What the dock reads of one priced collective (``backend.cost.price``)."""

    seconds: float
    seconds_per_call: float
    link: str
    formula: str


class MemoryFit(Protocol):
    """What the dock reads of the memory held against the hardware's."""

    text: str


class Pricing(Protocol):
    """What the dock reads of a result priced for one hardware profile
    (``backend.cost.price.Pricing``)."""

    label: str
    formulas: str
    estimate: str
    collectives: Sequence[CollectiveCost]
    step_seconds: float
    step_bytes: int
    memory: MemoryFit | None


def totals_by_kind(collectives: Sequence) -> dict[str, tuple[int, int]]:
    """Per kind: how many collectives and their bytes per device added up (predicted
    collectives' ``bytes_per_device`` or compiled ones' ``bytes`` times the runs per
    call)."""
    out: dict[str, tuple[int, int]] = {}
    for c in collectives:
        moved = getattr(c, "bytes_per_device", None)
        if moved is None:
            moved = c.bytes * c.runs_per_call
        n, b = out.get(c.kind, (0, 0))
        out[c.kind] = (n + 1, b + moved)
    return out


def time_text(seconds: float | None) -> str:
    """``12.3 µs`` (``units.seconds_text``); ``—`` when unknown."""
    return NOT_EXPLAINED if seconds is None else seconds_text(seconds)


def op_label(graph: ProgramGraph | None, op: int | None) -> str:
    """``stablehlo.add (op 1)``; ``—`` without an op."""
    if op is None:
        return NOT_EXPLAINED
    if graph is None or not 0 <= op < len(graph.ops):
        return f"op {op}"
    return f"{graph.ops[op].name} (op {op})"


def compiled_ops(c: CompiledCollective) -> list[int]:
    """The program ops the operands of ``c`` serve, each once, in operand order."""
    out: list[int] = []
    for t in c.tensors:
        if t.op is not None and t.op not in out:
            out.append(t.op)
    return out


def main_op(c: CompiledCollective) -> int | None:
    """The op choosing ``c`` selects: the one its cause names, else its first operand's,
    else the op holding it."""
    if c.cause is not None and c.cause.op is not None:
        return c.cause.op
    ops = compiled_ops(c)
    return ops[0] if ops else c.holder


def line_text(c: CompiledCollective) -> str:
    """``mlp.py:14`` for the first operand's line; ``+N`` where others have other lines."""
    lines: list[tuple[str, int]] = []
    for t in c.tensors:
        if t.line is not None and (t.file, t.line) not in lines:
            lines.append((t.file, t.line))
    if not lines and c.line is not None:
        lines.append((c.file, c.line))
    if not lines:
        return NOT_EXPLAINED
    file, line = lines[0]
    more = f" +{len(lines) - 1}" if len(lines) > 1 else ""
    return f"{os.path.basename(file) or '?'}:{line}{more}"


def hosts_text(crosses: bool | None) -> str:
    """``crosses``, ``within`` or ``—`` (an all-slice, or not known)."""
    return NOT_EXPLAINED if crosses is None else CROSSES if crosses else WITHIN


def compiled_cells(
    c: CompiledCollective,
    graph: ProgramGraph | None,
    seconds: float | None,
    across: int | None = None,
) -> list[tuple[str, object | None]]:
    """The cells of one compiled collective's row and the keys they sort by (``across``:
    the bytes one call sends across hosts, where priced)."""
    ops = compiled_ops(c)
    op = op_label(graph, ops[0] if ops else None)
    if len(ops) > 1:
        op += f" +{len(ops) - 1}"
    if c.holder is not None and c.holder not in ops:
        op = f"in {op_label(graph, c.holder)}: {op}"
    cause = c.cause
    axes = "+".join(c.axes) if c.axes else NOT_EXPLAINED
    cells: dict[str, tuple[str, object | None]] = {
        "Kind": (c.kind, None),
        "Axes": (axes, None),
        "Group": (str(c.group_size), c.group_size),
        "Operands": (str(c.operands), c.operands),
        "Bytes / device": (bytes_text(c.bytes), c.bytes),
        "Est. time": (time_text(seconds), seconds if seconds is not None else -1.0),
        "Hosts": (hosts_text(c.crosses_hosts), int(c.crosses_hosts)),
        "Across hosts": (
            bytes_text(across) if across is not None else NOT_EXPLAINED,
            across if across is not None else -1,
        ),
        "Tensor": (cause.tensor if cause is not None and cause.tensor else NOT_EXPLAINED, None),
        "Op": (op, ops[0] if ops else -1),
        "Line": (line_text(c), None),
        "Origin": (c.origin or NOT_EXPLAINED, None),
        "Prediction": ("matched" if c.predicted else "none", None),
        "Cause": (cause.text if cause is not None and cause.text else NOT_EXPLAINED, None),
    }
    return [cells[name] for name in COMPILED_COLUMNS]


def compiled_tip(c: CompiledCollective, graph: ProgramGraph | None) -> str:
    """The tooltip of a compiled collective's row: its instruction, groups, operands."""
    lines = [f"{c.name or c.kind} in {c.computation or '?'}: {c.groups_text or 'no groups'}"]
    if c.runs_per_call > 1:
        lines.append(f"runs {c.runs_per_call}× per call (the loops around it)")
    for t in c.tensors[:8]:
        where = f"{os.path.basename(t.file)}:{t.line}" if t.line is not None else "no line"
        lines.append(f"  {op_label(graph, t.op)} ← {t.op_name} ({where})")
    if len(c.tensors) > 8:
        lines.append(f"  … {len(c.tensors) - 8} more operands")
    if c.predicted:
        lines.append(
            "predicted as " + ", ".join(f"{p.kind} over {'+'.join(p.axes)}" for p in c.predicted)
        )
    else:
        lines.append("Shardy's prediction has no collective that matches it")
    return "\n".join(lines)


def groups_text(what: str, axes: Sequence[str] | None, groups: Sequence[Sequence[int]]) -> str:
    """``all_gather over data: 2 groups of 4 devices, outlined on the mesh: {0, 2} …``."""
    if not groups:
        return ""
    shown = " ".join("{" + ", ".join(map(str, g)) + "}" for g in groups[:16])
    more = f" … {len(groups) - 16} more" if len(groups) > 16 else ""
    over = "+".join(axes) if axes else "no whole mesh axis"
    return (
        f"{what} over {over}: {len(groups)} group{'s' if len(groups) != 1 else ''} of "
        f"{len(groups[0])} devices, outlined on the mesh: {shown}{more}"
    )


def memory_text(memory: dict | None, fit: str | None) -> str:
    """``Memory per device, XLA's CPU buffer assignment: peak 3.5 KiB, fits in 16 GB: <1%
    · arguments 1.5 KiB · …`` (the peak and its fit first: the line may be cut)."""
    if not memory:
        return ""
    parts = [
        f"{word} {bytes_text(int(memory[key]))}" for key, word in MEMORY_PARTS if key in memory
    ]
    peak = parts.pop() if "peak" in memory else ""
    if fit and peak:
        peak += f", {fit}"
    return f"{MEMORY_LABEL}: " + " · ".join([p for p in [peak, *parts] if p])


class LineLabel(QLabel):
    """One line of plain text, cut with ``…`` where the dock is narrower; the whole text
    is its tooltip (the dock is short: the table keeps the room)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._tip = ""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        super().setToolTip(f"{text}\n\n{self._tip}".strip() if text else self._tip)

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self._tip = tip
        self.setText(self.text())

    def sizeHint(self) -> QSize:
        return QSize(100, self.fontMetrics().height() + 2)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignVCenter), self.shown_text)

    @property
    def shown_text(self) -> str:
        """The text on one line, as it fits the label's width now."""
        line = " ".join(self.text().split())
        return self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, self.width())


def _table(columns: Sequence[str], parent: QWidget) -> QTableWidget:
    table = row_table(columns, parent, QHeaderView.ResizeMode.Interactive)
    table.setSortingEnabled(True)
    table.setWordWrap(False)
    return table


def _item(text: str, row: int, key: object | None, tip: str) -> SortableItem:
    item = SortableItem(text)
    item.setData(INDEX_ROLE, row)
    if key is not None:
        item.setData(SORT_ROLE, key)
    item.setToolTip(tip)
    return item


class CollectivesView(QWidget):
    """The collectives dock; see the module docstring.

    ``compiledSelected(index)`` gives the index in ``result.compiled_collectives`` of the
    compiled row the user chose, ``collectiveSelected(index)`` the index in
    ``result.collectives`` of the predicted one. ``hardwareChosen(name)``: the user picked
    another hardware profile. ``conflictRequested(index)`` and
    ``provenanceRequested(value)``: the chosen collective's links."""

    compiledSelected = Signal(int)
    collectiveSelected = Signal(int)
    hardwareChosen = Signal(str)
    conflictRequested = Signal(int)
    provenanceRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: PropagationResult | None = None
        self.collectives: list[Collective] = []
        self.compiled: list[CompiledCollective] | None = None
        self.pricing: Pricing | None = None
        self.compiling = False
        self.hosts = 1  # the hosts the result's mesh is laid over
        self.chosen: int | None = None  # the compiled collective shown below the table
        self.header = QLabel(f"<b>{HEADER}</b>", self)
        self.tabs = QTabBar(self)
        self.tabs.addTab("Compiled (XLA)")
        self.tabs.addTab("Shardy's prediction")
        self.tabs.setTabToolTip(
            COMPILED_TAB, "The collectives XLA compiled for the propagated program"
        )
        self.tabs.setTabToolTip(
            PREDICTED_TAB,
            "The collectives Shardy's explicit-reshard passes insert before compiling, each "
            "flagged matched or not by a compiled one",
        )
        self.tabs.setDrawBase(False)
        self.tabs.currentChanged.connect(self._on_tab)
        self.hardware = QComboBox(self)
        self.hardware.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.hardware.setMinimumContentsLength(24)
        self.hardware.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.hardware.setToolTip("The hardware the estimated times and the memory fit are for")
        self.hardware.currentIndexChanged.connect(self._on_hardware)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.header, 1)
        top.addWidget(self.tabs)
        top.addWidget(QLabel("Hardware:", self))
        top.addWidget(self.hardware)
        self.status = LineLabel(self)
        # How bytes and times are worked out, always in sight above the table.
        self.meaning = LineLabel(self)
        self.meaning.setText(BYTES_LINE)
        self.meaning.setToolTip(BYTES_HEADER_TIP)
        self.compiled_table = _table(COMPILED_COLUMNS, self)
        self.compiled_table.horizontalHeaderItem(COMPILED_BYTES_COLUMN).setToolTip(BYTES_HEADER_TIP)
        self.compiled_table.horizontalHeaderItem(TIME_COLUMN).setToolTip(
            "Estimated seconds per call of the program on the chosen hardware (the formula "
            "above the table), times the runs of the loops around it"
        )
        self.compiled_table.horizontalHeaderItem(HOSTS_COLUMN).setToolTip(
            "crosses: a device group holds devices of two hosts (it runs over the slow "
            "link); within: every group stays on one host"
        )
        self.compiled_table.horizontalHeaderItem(ACROSS_COLUMN).setToolTip(
            "Bytes one call of the program sends across hosts, summed over all devices "
            "(a ring sends each device's bytes to the next device of its group)"
        )
        self.compiled_table.horizontalHeaderItem(COMPILED_COLUMNS.index("Origin")).setToolTip(
            "user: written in the program (inside shard_map); partitioner: inserted by XLA"
        )
        self.compiled_table.horizontalHeaderItem(COMPILED_COLUMNS.index("Prediction")).setToolTip(
            "matched: Shardy's prediction has this collective; none: only the compiler has it"
        )
        self.compiled_table.sortByColumn(COMPILED_BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
        self.compiled_table.itemSelectionChanged.connect(self._on_compiled_selection)
        self.table = _table(PREDICTED_COLUMNS, self)
        self.table.horizontalHeaderItem(BYTES_COLUMN).setToolTip(BYTES_HEADER_TIP)
        self.table.horizontalHeaderItem(2).setToolTip("Devices in one group of the collective")
        self.table.horizontalHeaderItem(6).setToolTip(
            "matched: a compiled collective matches it; not compiled: XLA emits none like "
            "it; —: not compiled yet, or an all-slice (it moves nothing)"
        )
        self.table.horizontalHeaderItem(PREDICTED_HOSTS_COLUMN).setToolTip(
            "crosses: a device group over its axes holds devices of two hosts; within: "
            "every group stays on one host"
        )
        self.table.sortByColumn(BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.stack = QStackedWidget(self)
        # Room for the header and a few rows however short the dock.
        self.stack.setMinimumHeight(110)
        self.stack.addWidget(self.compiled_table)
        self.stack.addWidget(self.table)
        self.groups = QLabel(self)
        self.groups.setWordWrap(True)
        self.groups.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.explain = QLabel(self)
        self.explain.setWordWrap(True)
        self.explain.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.conflict_button = QPushButton("Show the conflict", self)
        self.conflict_button.setToolTip("Its factor table in the Conflicts dock")
        self.conflict_button.clicked.connect(self._on_conflict)
        self.provenance_button = QPushButton("Show provenance", self)
        self.provenance_button.setToolTip("Where the tensor's sharding came from (Provenance)")
        self.provenance_button.clicked.connect(self._on_provenance)
        links = QHBoxLayout()
        links.setContentsMargins(0, 0, 0, 0)
        links.addWidget(self.explain, 1)
        links.addWidget(self.conflict_button)
        links.addWidget(self.provenance_button)
        self.totals = LineLabel(self)
        self.totals.setToolTip(BYTES_HEADER_TIP)
        self.traffic = LineLabel(self)
        self.traffic.setToolTip(
            "Bytes one call of the program sends, summed over all devices, that stay within "
            "a host and that cross hosts, and the estimated seconds on each link"
        )
        self.memory = LineLabel(self)
        self.memory.setToolTip(
            "compiled.memory_analysis() of the compile on fake CPU devices: XLA's buffer "
            "assignment for the CPU, which an accelerator's may differ from"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.meaning)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.groups)
        layout.addLayout(links)
        layout.addWidget(self.totals)
        layout.addWidget(self.traffic)
        layout.addWidget(self.memory)
        self._want_prediction = False
        self._pending = False
        self.note = ""
        self.set_result(None)

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    # -- filling --------------------------------------------------------------------------
    def set_profiles(self, profiles: Sequence[tuple[str, str]], current: str) -> None:
        """The hardware picker's entries (name, label) and the one chosen."""
        box = self.hardware
        box.blockSignals(True)
        box.clear()
        for name, label in profiles:
            box.addItem(label, name)
        index = box.findData(current)
        box.setCurrentIndex(max(index, 0))
        box.blockSignals(False)

    def set_result(
        self,
        result: PropagationResult | None,
        *,
        pending: bool = False,
        compiling: bool = False,
        pricing: Pricing | None = None,
        note: str = "",
    ) -> None:
        """List the collectives of ``result`` (None: none yet; ``pending``: one is being
        computed). ``compiling``: XLA is compiling it (the prediction is shown until it
        is done); ``pricing``: its compiled collectives priced for the chosen hardware;
        ``note``: why it is not compiled, where it will not be."""
        self.result = result
        self._pending = pending
        self.note = note
        self.collectives = list(result.collectives) if result is not None else []
        compiled = result.compiled_collectives if result is not None else None
        self.compiled = list(compiled) if compiled is not None else None  # type: ignore[arg-type]
        self.compiling = (
            bool(compiling)
            and result is not None
            and self.compiled is None
            and not result.compile_error
        )
        self.pricing = pricing if self.compiled is not None else None
        self.chosen = None
        self.hosts = int(getattr(result, "hosts", 1) or 1) if result is not None else 1
        self._fill_predicted()
        self._fill_compiled()
        self._show_tab()
        self._clear_detail()

    def set_pricing(self, pricing: Pricing | None) -> None:
        """Reprice the compiled rows: only the time cells and the cost lines change."""
        self.pricing = pricing if self.compiled is not None else None
        table = self.compiled_table
        costs = self.pricing.collectives if self.pricing is not None else None
        sorting = table.isSortingEnabled()
        table.setSortingEnabled(False)
        for r in range(table.rowCount()):
            item = table.item(r, TIME_COLUMN)
            index = int(item.data(INDEX_ROLE))
            seconds = costs[index].seconds_per_call if costs is not None else None
            item.setText(time_text(seconds))
            item.setData(SORT_ROLE, seconds if seconds is not None else -1.0)
            item.setToolTip(self._time_tip(index))
            across = table.item(r, ACROSS_COLUMN)
            moved = costs[index].bytes_across_hosts if costs is not None else None
            across.setText(bytes_text(moved) if moved is not None else NOT_EXPLAINED)
            across.setData(SORT_ROLE, moved if moved is not None else -1)
        table.setSortingEnabled(sorting)
        self._fill_lines()

    def _fill_predicted(self) -> None:
        result = self.result
        graph = result.graph if result is not None else None
        matched = (result.predicted_matched if result is not None else None) or []
        crossing = getattr(result, "predicted_crossing", None) or []
        table = self.table
        table.blockSignals(True)
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(self.collectives))
        for r, c in enumerate(self.collectives):
            tensor = graph.values[c.value].display_name if graph and c.value is not None else ""
            op = f"{c.op_name} (op {c.op})" if c.op is not None else "return"
            flag = matched[r] if r < len(matched) else None
            cells = [
                (c.kind, None),
                ("+".join(c.axes) or NOT_EXPLAINED, None),
                (str(c.group_size), c.group_size),
                (tensor, None),
                (op, c.op if c.op is not None else -1),
                (bytes_text(c.bytes_per_device), c.bytes_per_device),
                (NOT_EXPLAINED if flag is None else "matched" if flag else "not compiled", None),
                (hosts_text(crossing[r] if r < len(crossing) else None), None),
            ]
            tip = f"{c.kind} → {dims_text(c.out_spec)}; bytes per device = "
            tip += BYTES_MEANING.get(c.kind, "?")
            for col, (text, key) in enumerate(cells):
                table.setItem(r, col, _item(text, r, key, tip))
            _mark_crossing(table.item(r, PREDICTED_HOSTS_COLUMN))
        table.setSortingEnabled(True)
        table.blockSignals(False)
        table.setColumnHidden(PREDICTED_HOSTS_COLUMN, self.hosts < 2)
        table.resizeColumnsToContents()

    def _fill_compiled(self) -> None:
        result = self.result
        graph = result.graph if result is not None else None
        compiled = self.compiled or []
        costs = self.pricing.collectives if self.pricing is not None else None
        table = self.compiled_table
        table.blockSignals(True)
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(compiled))
        for r, c in enumerate(compiled):
            seconds = costs[r].seconds_per_call if costs is not None else None
            across = costs[r].bytes_across_hosts if costs is not None else None
            tip = compiled_tip(c, graph)
            for col, (text, key) in enumerate(compiled_cells(c, graph, seconds, across)):
                cell_tip = self._time_tip(r) if col == TIME_COLUMN else tip
                if col == CAUSE_COLUMN and c.cause is not None and c.cause.text:
                    cell_tip = c.cause.text
                table.setItem(r, col, _item(text, r, key, cell_tip))
            _mark_crossing(table.item(r, HOSTS_COLUMN))
        table.setSortingEnabled(True)
        table.blockSignals(False)
        for col in (HOSTS_COLUMN, ACROSS_COLUMN):
            table.setColumnHidden(col, self.hosts < 2)
        table.resizeColumnsToContents()
        # Long tensor names and op lists are cut; their tooltips have them whole.
        header = table.horizontalHeader()
        for name in ("Tensor", "Op"):
            col = COMPILED_COLUMNS.index(name)
            header.resizeSection(col, min(header.sectionSize(col), 260))

    def _time_tip(self, index: int) -> str:
        pricing = self.pricing
        if pricing is None or self.compiled is None:
            return "Pick a hardware profile to estimate times"
        cost = pricing.collectives[index]
        return f"{pricing.label}: {cost.formula}\n{pricing.estimate}"

    def _show_tab(self) -> None:
        """The compiled table where there is one and the user did not ask for the
        prediction; else the prediction."""
        has_compiled = self.compiled is not None
        show_compiled = has_compiled and not self._want_prediction
        # Disabling the current tab moves to another: not the user's choice.
        self.tabs.blockSignals(True)
        self.tabs.setTabEnabled(COMPILED_TAB, has_compiled)
        self.tabs.setCurrentIndex(COMPILED_TAB if show_compiled else PREDICTED_TAB)
        self.tabs.blockSignals(False)
        self.stack.setCurrentWidget(self.compiled_table if show_compiled else self.table)
        self.hardware.setEnabled(has_compiled)
        self._fill_lines()

    @property
    def showing_compiled(self) -> bool:
        """Whether the table shown is the compiled program's."""
        return self.stack.currentWidget() is self.compiled_table

    def _fill_lines(self) -> None:
        """The header, status, formulas, totals and memory lines for what is shown."""
        result = self.result
        error = result.compile_error if result is not None else None
        n = len(self.collectives)
        if self.showing_compiled:
            self._compiled_lines()
            return
        header = HEADER
        if self.compiling:
            header += " — compiling…"
        elif error == COMPILE_CANCELLED:
            header += " — compile cancelled"
        elif error:
            header += " — the compile failed"
        elif result is not None and self.compiled is None and self.note:
            header += " — not compiled"
        self.header.setText(f"<b>{header}</b>")
        self.header.setToolTip("")
        self.meaning.setText(BYTES_LINE)
        self.meaning.setToolTip(BYTES_HEADER_TIP)
        if result is None:
            self.status.setText("Propagating…" if self._pending else self._empty_status)
        elif error == COMPILE_CANCELLED:
            self.status.setText(
                "The XLA compile was cancelled: propagate again (F5) to see the compiled "
                "collectives."
            )
        elif error:
            self.status.setText(f"The XLA compile failed: {error}")
        elif self.compiled is None and self.note:
            self.status.setText(self.note)
        elif n == 0:
            self.status.setText("Shardy inserts no collective: nothing moves between devices.")
        else:
            matched = [m for m in (result.predicted_matched or []) if m is not None]
            flags = (
                f"; {sum(matched)} of {len(matched)} matched by a compiled one"
                if self.compiled is not None
                else ""
            )
            self.status.setText(
                f"{n} collective{'s' if n != 1 else ''} Shardy inserts before compiling"
                f"{flags} (choose one to outline its device groups on the mesh)."
            )
        totals = totals_by_kind(self.collectives)
        parts = [f"{k} {n}× {bytes_text(b)}" for k, (n, b) in sorted(totals.items())]
        total = sum(b for _, b in totals.values())
        self.totals.setText(
            ("Per device: " + " · ".join(parts) + f" — total {bytes_text(total)}") if parts else ""
        )
        crossing = sum(1 for c in getattr(result, "predicted_crossing", None) or () if c)
        self._show_traffic(
            f"On {self.hosts} hosts: {crossing} of {n} predicted collectives cross hosts "
            "(the compiled ones give the bytes across hosts)"
            if self.hosts > 1 and result is not None
            else ""
        )
        self.memory.setText("")
        self.memory.setVisible(False)

    def _compiled_lines(self) -> None:
        result = self.result
        assert result is not None and self.compiled is not None
        pricing = self.pricing
        devices = result.mesh.size
        framework = getattr(result, "compiled_by", None)
        if framework and framework != "shardscope":
            self.header.setText(
                f"<b>{framework}'s own compiled module (GSPMD), as the script ran it</b> · "
                f"{devices} fake CPU device{'s' if devices != 1 else ''}"
            )
            self.header.setToolTip(
                f"The collectives of the partitioned, optimized module {framework} compiled "
                f"for this graph when the script ran (its XLA dump); edit the mesh or a spec "
                f"and shardscope compiles the edited program itself"
            )
        else:
            self.header.setText(
                f"<b>{COMPILED_HEADER}</b> · {devices} fake CPU device{'s' if devices != 1 else ''}"
            )
            self.header.setToolTip(
                "The annotated program compiled with XLA on fake CPU devices, one per mesh "
                "device: the collectives of its partitioned, optimized module"
            )
        if pricing is not None:
            self.meaning.setText(f"Est. time on {pricing.label}: {pricing.formulas}")
            self.meaning.setToolTip(f"{pricing.estimate}\n\n{BYTES_HEADER_TIP}")
        else:
            self.meaning.setText(BYTES_LINE)
            self.meaning.setToolTip(BYTES_HEADER_TIP)
        n = len(self.compiled)
        if n == 0:
            self.status.setText("The compiled program moves nothing between devices.")
        else:
            users = sum(1 for c in self.compiled if c.origin == "user")
            unmatched = sum(1 for c in self.compiled if not c.predicted)
            self.status.setText(
                f"{n} collective instruction{'s' if n != 1 else ''} in the compiled program "
                f"({users} written by the user, {n - users} inserted by the partitioner; "
                f"{unmatched} not in Shardy's prediction): choose one to see why."
            )
        totals = totals_by_kind(self.compiled)
        parts = [f"{k} {n}× {bytes_text(b)}" for k, (n, b) in sorted(totals.items())]
        text = ""
        if parts:
            total = sum(b for _, b in totals.values())
            text = "Per device per call: " + " · ".join(parts) + f" — total {bytes_text(total)}"
            if pricing is not None:
                text += f"; est. step {time_text(pricing.step_seconds)} on {pricing.label}"
        self.totals.setText(text)
        self._show_traffic(self._traffic_text())
        self.memory.setText(
            memory_text(result.memory, pricing.memory.text if pricing and pricing.memory else None)
        )
        self.memory.setVisible(bool(self.memory.text()))

    def _show_traffic(self, text: str) -> None:
        self.traffic.setText(text)
        self.traffic.setVisible(bool(text))

    def _traffic_text(self) -> str:
        """``On 2 hosts: 3 of 5 collectives cross hosts · per step across hosts 1.5 MiB
        (DCN, 12.0 µs) · within hosts 3.0 MiB (ICI, 2.1 µs)``; "" on one host."""
        if self.hosts < 2 or self.compiled is None:
            return ""
        crossing = sum(1 for c in self.compiled if c.crosses_hosts)
        text = (
            f"On {self.hosts} hosts: {crossing} of {len(self.compiled)} compiled collectives "
            "cross hosts"
        )
        pricing = self.pricing
        if pricing is None:
            return text
        links = [link.name for link in getattr(pricing, "links", ())]
        fast = links[0] if links else "the fast link"
        slow = links[-1] if len(links) > 1 else "the slow link"
        return (
            f"{text} · per step across hosts "
            f"{bytes_text(getattr(pricing, 'step_bytes_across_hosts', 0))} ({slow}, "
            f"{time_text(getattr(pricing, 'step_seconds_slow_link', 0.0))}) · within hosts "
            f"{bytes_text(getattr(pricing, 'step_bytes_within_hosts', 0))} ({fast}, "
            f"{time_text(getattr(pricing, 'step_seconds_fast_link', 0.0))})"
        )

    @property
    def _empty_status(self) -> str:
        return "No propagation yet: propagate (F5) to see the collectives."

    # -- choosing -------------------------------------------------------------------------
    def _clear_detail(self) -> None:
        self.groups.setText("")
        self.groups.setVisible(False)
        self.explain.setText("")
        self.explain.setVisible(False)
        self.conflict_button.setVisible(False)
        self.provenance_button.setVisible(False)
        self.chosen = None

    def show_groups(self, index: int, groups: list[tuple[int, ...]]) -> None:
        """Say which device groups predicted collective ``index`` runs in (outlined on the
        mesh)."""
        self._clear_detail()
        c = self.collectives[index]
        self.groups.setText(groups_text(c.kind, c.axes, groups))
        self.groups.setVisible(bool(groups))

    def show_compiled(self, index: int, groups: list[tuple[int, ...]]) -> None:
        """Explain compiled collective ``index``: its device groups (outlined on the mesh,
        as ``groups`` gives them), the sharding its tensor had and the one needed, why,
        and links to the conflict and the provenance that explain it."""
        assert self.compiled is not None
        self._clear_detail()
        self.chosen = index
        c = self.compiled[index]
        if c.device_groups and c.kind == "collective-permute":
            pairs = len(c.device_groups)
            self.groups.setText(
                f"collective-permute over {'+'.join(c.axes or ()) or 'no whole mesh axis'}: "
                f"{pairs} source→target pair{'s' if pairs != 1 else ''}, outlined on the "
                "mesh: " + " ".join(f"{g[0]}→{g[-1]}" for g in groups[:16])
            )
        else:
            self.groups.setText(groups_text(c.kind, c.axes, groups))
        self.groups.setVisible(bool(groups))
        self.explain.setText(explain_text(c, self.result.graph if self.result else None))
        self.explain.setVisible(True)
        cause = c.cause
        self.conflict_button.setVisible(cause is not None and cause.conflict is not None)
        self.provenance_button.setVisible(cause is not None and cause.provenance is not None)

    def select(self, index: int) -> None:
        """Choose the row of ``result.collectives[index]`` (the prediction)."""
        self._select_in(self.table, index)

    def select_compiled(self, index: int) -> None:
        """Choose the row of ``result.compiled_collectives[index]``."""
        self._select_in(self.compiled_table, index)

    def _select_in(self, table: QTableWidget, index: int) -> None:
        for r in range(table.rowCount()):
            if table.item(r, 0).data(INDEX_ROLE) == index:
                table.selectRow(r)
                return

    def show_prediction(self, on: bool) -> None:
        """Show Shardy's prediction (``on``) or the compiled collectives, where compiled."""
        self._want_prediction = bool(on)
        self._clear_detail()
        self._show_tab()

    def row_texts(self) -> list[list[str]]:
        """The cells of the table shown, as shown (hidden columns left out), top to bottom."""
        t = self.stack.currentWidget()
        assert isinstance(t, QTableWidget)
        shown = [c for c in range(t.columnCount()) if not t.isColumnHidden(c)]
        return [[t.item(r, c).text() for c in shown] for r in range(t.rowCount())]

    def column(self, name: str) -> list[str]:
        """The cells of the shown table's column ``name``, top to bottom."""
        t = self.stack.currentWidget()
        assert isinstance(t, QTableWidget)
        columns = COMPILED_COLUMNS if t is self.compiled_table else PREDICTED_COLUMNS
        col = columns.index(name)
        return [t.item(r, col).text() for r in range(t.rowCount())]

    def _on_tab(self, index: int) -> None:
        self.show_prediction(index == PREDICTED_TAB)

    def _on_hardware(self, index: int) -> None:
        name = self.hardware.itemData(index)
        if name is not None:
            self.hardwareChosen.emit(str(name))

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            self.collectiveSelected.emit(int(items[0].data(INDEX_ROLE)))

    def _on_compiled_selection(self) -> None:
        items = self.compiled_table.selectedItems()
        if items:
            self.compiledSelected.emit(int(items[0].data(INDEX_ROLE)))

    def _on_conflict(self) -> None:
        c = self._chosen()
        if c is not None and c.cause is not None and c.cause.conflict is not None:
            self.conflictRequested.emit(int(c.cause.conflict))

    def _on_provenance(self) -> None:
        c = self._chosen()
        if c is not None and c.cause is not None and c.cause.provenance is not None:
            self.provenanceRequested.emit(int(c.cause.provenance))

    def _chosen(self) -> CompiledCollective | None:
        if self.chosen is None or self.compiled is None:
            return None
        return self.compiled[self.chosen]


def _mark_crossing(item) -> None:
    """Colour a ``crosses`` Hosts cell in the warning colour."""
    if item is not None and item.text() == CROSSES:
        item.setForeground(QBrush(CROSSING))


def explain_text(c: CompiledCollective, graph: ProgramGraph | None) -> str:
    """``y: had [data, _] → needed [_, _] · the cause`` (what is not known says so)."""
    cause = c.cause
    if cause is None:
        where = line_text(c)
        op = op_label(graph, main_op(c))
        return f"{c.kind} for {op} at {where}: why it is there is not worked out for it."
    tensor = cause.tensor or "its tensor"
    shardings = (
        f"{tensor}: had {dims_text(cause.had)} → needed {dims_text(cause.needed)}"
        if cause.had is not None or cause.needed is not None
        else f"{tensor}: the two shardings are not known"
    )
    text = cause.text or cause.kind
    line = f" (line {cause.line})" if cause.line is not None else ""
    if f"line {cause.line}" in text:
        line = ""
    return f"{shardings} · {text}{line}"
