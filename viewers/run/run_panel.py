"""The Run dock: what a run on the devices found, from one ``RunResult``.

A summary line (platform, devices, compile and run time, memory per device); the outputs
and arguments (shape, spec, error against the unsharded run, whether replicas hold the same
bytes, flagged red when not); the chosen one's shard on each device, as heat maps laid out
like the mesh (``heatmap``), as a table, and moved between two shardings (``reshard``);
the compiled
collectives (sortable, each matched with the predicted ones or called unmatched); the
predicted collectives the compiler did not emit; XLA's warnings (choosing one emits
``warningSelected``). ``set_stale`` marks the result as made for a mesh or specs that
have changed since.

A run on several hosts (``RunResult.hosts`` processes) says so in the summary, lists each
shard's host beside its device, names the hosts of the devices in the heat maps' labels,
and marks each compiled collective whose device groups cross hosts (``crosses``); on one
host those columns are hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.units import bytes_text
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.table_items import INDEX_ROLE, SORT_ROLE, SortableItem, row_table
from shardscope.viewers.run.heatmap import HeatmapView
from shardscope.viewers.run.reshard import ReshardView
from shardscope.viewers.run.run_text import (
    groups_text,
    host_devices_text,
    index_text,
    itemsize,
    predicted_text,
    summary_text,
)

if TYPE_CHECKING:
    from shardscope.backend.run.result import (
        CompiledCollective,
        RunResult,
        Shard,
        TensorRun,
    )
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.selection import Selection

HINT = "Run the program (Propagation > Run on devices) to see each device's shard."
STALE = "Stale: the mesh or specs changed since this run. Run again (Ctrl+R) to update."
TENSOR_COLUMNS = ("Name", "Shape", "Spec", "Max rel error", "Replicas identical")
SHARD_COLUMNS = ("Device", "Host", "Index ranges", "Local shape", "Checksum")
SHARD_HOST_COLUMN = 1
COLLECTIVE_COLUMNS = (
    "Kind",
    "Hosts",
    "Device groups",
    "Shape",
    "Bytes / device",
    "Source",
    "Predicted",
)
BYTES_COLUMN = COLLECTIVE_COLUMNS.index("Bytes / device")
HOSTS_COLUMN = COLLECTIVE_COLUMNS.index("Hosts")
MISMATCH = QColor("#D64545")
CROSSING = QColor("#C26A00")


def run_mesh(result: RunResult) -> Mesh | None:
    """The mesh a result ran on (its axes and device order)."""
    try:
        return Mesh.from_dict(result.mesh, result.device_order or None)
    except ShardscopeError:
        return None


def _scrolled(widget: QWidget, parent: QWidget) -> QScrollArea:
    area = QScrollArea(parent)
    area.setWidgetResizable(True)
    area.setWidget(widget)
    return area


def session_spec_text(session: Session, name: str) -> str | None:
    """The sharding ``session`` gives the tensor named ``name`` now, as text (None where
    the program has no such tensor or it has no sharding)."""
    graph = session.graph
    value = graph.value_by_name(name) if graph is not None else None
    if value is None:
        return None
    spec = session.display_spec(value.id)
    return spec.format() if spec is not None else None


class RunPanel(QWidget):
    """The Run dock; ``collectiveSelected(index)`` gives the index in ``result.collectives``
    of the compiled collective the user chose."""

    collectiveSelected = Signal(int)
    warningSelected = Signal(int)
    # The user asked to stop the run under way (the dock's Cancel button).
    cancelRequested = Signal()

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        session: Session | None = None,
        selection: Selection | None = None,
    ) -> None:
        """``session``: a new program clears the dock, an edit marks its result stale,
        and the reshard view offers the session's specs; ``selection``: a collective
        chosen outlines its device groups there (on every device view)."""
        super().__init__(parent)
        self.result: RunResult | None = None
        self.tensors: list[TensorRun] = []
        self.stale = False
        self.selection = selection
        # The spec the session gives a tensor now (offered in the reshard view).
        self.session_spec: Callable[[str], str | None] = lambda _name: None
        self._links = Connections()
        if session is not None:
            self.session_spec = lambda name: session_spec_text(session, name)
            ev = session.events
            self._links.connect(ev.program, lambda _program: self.set_result(None))
            for edited in (ev.mesh, ev.hosts, ev.specs):
                self._links.connect(edited, self._on_edit)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop the run: its worker is killed, nothing changes (Esc)")
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.hide()
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.tensor_table = row_table(TENSOR_COLUMNS, self)
        self.tensor_table.itemSelectionChanged.connect(self._on_tensor_selection)
        self.shard_title = QLabel(self)
        self.shard_table = row_table(SHARD_COLUMNS, self)
        self.heatmap = HeatmapView(self)
        self.reshard = ReshardView(self)
        self.shard_tabs = QTabWidget(self)
        self.shard_tabs.addTab(_scrolled(self.heatmap, self), "Heat maps")
        self.shard_tabs.addTab(self.shard_table, "Shards")
        self.shard_tabs.addTab(_scrolled(self.reshard, self), "Reshard")
        shards = QWidget(self)
        shards_layout = QVBoxLayout(shards)
        shards_layout.setContentsMargins(0, 0, 0, 0)
        shards_layout.addWidget(self.shard_title)
        shards_layout.addWidget(self.shard_tabs, 1)

        self.collective_table = row_table(COLLECTIVE_COLUMNS, self)
        self.collective_table.horizontalHeaderItem(BYTES_COLUMN).setToolTip(
            "Bytes one device sends or receives (the Collectives dock says how each kind counts)"
        )
        self.collective_table.setSortingEnabled(True)
        self.collective_table.itemSelectionChanged.connect(self._on_collective_selection)
        self.groups = QLabel(self)
        self.groups.setWordWrap(True)
        self.groups.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.predicted_only = QLabel(self)
        self.predicted_only.setWordWrap(True)
        self.warnings = QListWidget(self)
        self.warnings.setWordWrap(True)
        self.warnings.setToolTip("Choose a warning to select its op in the graph")
        self.warnings.currentRowChanged.connect(self._on_warning)
        self.warnings.itemClicked.connect(lambda item: self._on_warning(self.warnings.row(item)))
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.collective_table, 2)
        right_layout.addWidget(self.groups)
        right_layout.addWidget(self.predicted_only)
        right_layout.addWidget(self.warnings, 1)

        # Side by side: the dock shares the messages' wide and short place.
        self.body = QSplitter(Qt.Orientation.Horizontal, self)
        self.body.addWidget(self.tensor_table)
        self.body.addWidget(shards)
        self.body.addWidget(right)
        for i, stretch in enumerate((2, 3, 3)):
            self.body.setStretchFactor(i, stretch)
        self.body.setSizes([400, 560, 460])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.status, 1)
        top.addWidget(self.cancel_button)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.body, 1)
        self.set_result(None)

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom.
        return QSize(400, 120)

    # -- states ---------------------------------------------------------------------------
    def set_running(self, what: str) -> None:
        """Say a run is under way (the last result stays shown below)."""
        self.status.setText(f"Running {what}…")

    def set_cancellable(self, cancellable: bool) -> None:
        """Show the Cancel button (while a run is under way) or hide it."""
        self.cancel_button.setVisible(cancellable)

    def set_failed(self, message: str) -> None:
        """Say the last run failed (the result before it, if any, stays shown):
        ``message`` says why, after "the run failed" or in place of it where it begins
        so."""
        said = (
            message
            if message.lower().startswith("the run failed")
            else (f"the run failed: {message}")
        )
        self.status.setText(said[:1].upper() + said[1:])

    def detach(self) -> None:
        """Stop following the session."""
        self._links.close()

    def _on_edit(self, *_args) -> None:
        if self.result is not None:
            self.set_stale(True)

    def set_stale(self, stale: bool = True) -> None:
        """Mark the shown result as made for an older mesh or specs (or not)."""
        self.stale = bool(stale) and self.result is not None
        self._show_status()

    def set_result(self, result: RunResult | None) -> None:
        """Show ``result`` (None: no run yet)."""
        self.result = result
        self.stale = False
        self.tensors = [*result.outputs, *result.arguments] if result is not None else []
        self.summary.setText(summary_text(result) if result is not None else "")
        self.body.setVisible(result is not None)
        self.heatmap.set_groups([])
        self._fill_tensors()
        self._fill_shards(None)
        self._fill_collectives()
        self._fill_warnings()
        self._show_status()

    def _show_status(self) -> None:
        result = self.result
        if result is None:
            self.status.setText(HINT)
        elif self.stale:
            self.status.setText(STALE)
        else:
            bad = [t.name for t in self.tensors if not t.replicas_match]
            self.status.setText(
                f"Replicas differ in {', '.join(bad)}."
                if bad
                else "Every replica holds the same bytes."
            )

    # -- tables ---------------------------------------------------------------------------
    def _fill_tensors(self) -> None:
        table = self.tensor_table
        table.blockSignals(True)
        table.clearContents()
        table.setRowCount(len(self.tensors))
        for r, t in enumerate(self.tensors):
            error = "—" if t.max_rel_error is None else f"{t.max_rel_error:.2e}"
            if t.error_not_finite:
                error += " (not finite)"
            replicas = (
                "yes"
                if t.replicas_match
                else "no: devices " + "; ".join(",".join(map(str, g)) for g in t.replica_mismatches)
            )
            cells = (t.label, f"{t.dtype}{list(t.shape)}", f"[{t.spec}]", error, replicas)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(INDEX_ROLE, r)
                if col == 0 and t.where:
                    item.setToolTip(f"{t.name} is {t.path} of the function's return value")
                if not t.replicas_match:
                    item.setForeground(QBrush(MISMATCH))
                    item.setToolTip("Devices that should hold the same piece hold different bytes")
                table.setItem(r, col, item)
        table.blockSignals(False)

    @property
    def hosts(self) -> int:
        """The hosts (processes) the shown run ran on."""
        return int(getattr(self.result, "hosts", 1) or 1) if self.result is not None else 1

    def _fill_shards(self, tensor: TensorRun | None) -> None:
        shards: tuple[Shard, ...] = tensor.shards if tensor is not None else ()
        title = (
            f"{tensor.label}: {len(shards)} shards, one per device"
            if tensor is not None
            else ("Choose an output or argument to list its shards." if self.tensors else "")
        )
        if tensor is not None and self.hosts > 1:
            title += f", on {self.hosts} hosts: " + host_devices_text(shards)
        self.shard_title.setText(title)
        table = self.shard_table
        table.clearContents()
        table.setRowCount(len(shards))
        for r, s in enumerate(shards):
            cells = (
                str(s.device),
                f"h{s.host}",
                index_text(s.index),
                f"{list(s.shape)} ({s.padding_text})" if s.padding_text else str(list(s.shape)),
                s.checksum,
            )
            for col, text in enumerate(cells):
                table.setItem(r, col, QTableWidgetItem(text))
        table.setColumnHidden(SHARD_HOST_COLUMN, self.hosts < 2)
        result = self.result
        mesh = run_mesh(result) if result is not None else None
        self.heatmap.set_tensor(
            tensor,
            mesh.axis_sizes if mesh is not None else (),
            list(mesh.device_order) if mesh is not None else None,
            hosts=self.hosts > 1,
        )
        self._offer_reshard(tensor, mesh)

    def _offer_reshard(self, tensor: TensorRun | None, mesh: Mesh | None) -> None:
        if tensor is None or mesh is None:
            self.reshard.set_tensor(None)
            return
        replicated = ",".join("_" for _ in tensor.shape) or "_"
        choices = [("replicated, as from the host", replicated)]
        if tensor.spec:
            placed = (
                "as the compiled program produced it"
                if tensor.name.startswith("result[")
                else "as the compiled program wants it"
            )
            choices.append((placed, tensor.spec))
        current = self.session_spec(tensor.name)
        if current:
            choices.append(("the session's spec now", current))
        self.reshard.set_tensor(
            tensor.name,
            tensor.shape,
            tensor.dtype,
            itemsize(tensor.dtype),
            mesh,
            choices,
            source=0,
            target=1 if len(choices) > 1 else 0,
        )

    def _fill_collectives(self) -> None:
        result = self.result
        collectives: list[CompiledCollective] = result.collectives if result is not None else []
        table = self.collective_table
        table.blockSignals(True)
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(collectives))
        for r, c in enumerate(collectives):
            source = c.source + (f":{c.line}" if c.line else "")
            cells = (
                (c.kind + (f" ×{c.operands}" if c.operands > 1 else ""), None),
                ("crosses" if c.crosses_hosts else "within", int(c.crosses_hosts)),
                (groups_text(c.device_groups), None),
                (str(list(c.shape)), None),
                (bytes_text(c.bytes), c.bytes),
                (source, None),
                (predicted_text(c.predicted), None),
            )
            for col, (text, key) in enumerate(cells):
                item = SortableItem(text)
                item.setData(INDEX_ROLE, r)
                if key is not None:
                    item.setData(SORT_ROLE, key)
                item.setToolTip(c.name)
                if col == HOSTS_COLUMN and c.crosses_hosts:
                    item.setForeground(QBrush(CROSSING))
                    item.setToolTip(f"{c.name}: a device group holds devices of two hosts")
                table.setItem(r, col, item)
        table.setSortingEnabled(True)
        table.blockSignals(False)
        table.setColumnHidden(HOSTS_COLUMN, self.hosts < 2)
        crossing = sum(1 for c in collectives if c.crosses_hosts)
        across = f", {crossing} crossing hosts" if self.hosts > 1 else ""
        self.groups.setText(
            f"{len(collectives)} compiled collective{'s' if len(collectives) != 1 else ''}"
            f"{across} (choose one to outline its device groups on the mesh and the heat maps)."
            if result is not None
            else ""
        )
        missing = result.predicted_only if result is not None else []
        self.predicted_only.setText(
            "Predicted but not compiled: "
            + "; ".join(f"{p.kind} {'+'.join(p.axes)} at {p.source}" for p in missing)
            if missing
            else ""
        )

    def _fill_warnings(self) -> None:
        self.warnings.clear()
        result = self.result
        warnings = result.warnings if result is not None else []
        self.warnings.blockSignals(True)
        for w in warnings:
            self.warnings.addItem(f"XLA: {w.op_name or w.instruction or '?'}: {w.message}")
        self.warnings.blockSignals(False)
        self.warnings.setVisible(bool(warnings))

    def _on_warning(self, row: int) -> None:
        if self.result is not None and 0 <= row < len(self.result.warnings):
            self.warningSelected.emit(row)

    # -- choosing -------------------------------------------------------------------------
    def select_tensor(self, name: str) -> None:
        """Choose the row of the output or argument ``name``."""
        for r, t in enumerate(self.tensors):
            if t.name == name:
                self.tensor_table.selectRow(r)
                return
        raise KeyError(name)

    def select_collective(self, index: int) -> None:
        """Choose the row of ``result.collectives[index]``."""
        table = self.collective_table
        for r in range(table.rowCount()):
            if table.item(r, 0).data(INDEX_ROLE) == index:
                table.selectRow(r)
                return

    def show_groups(self, index: int) -> None:
        """Say which device groups collective ``index`` ran in and outline them on the
        heat maps (the window outlines them on the mesh too)."""
        if self.result is None:
            return
        c = self.result.collectives[index]
        if c.device_groups is None:
            self.heatmap.set_groups([])
            self.groups.setText(f"{c.kind}: the compiled HLO names no device groups.")
            return
        self.heatmap.set_groups([tuple(g) for g in c.device_groups], c.kind)
        n = len(c.device_groups)
        crosses = ""
        if self.hosts > 1:
            crosses = " (crosses hosts)" if c.crosses_hosts else " (within each host)"
        self.groups.setText(
            f"{c.kind}: {n} group{'s' if n != 1 else ''}{crosses}, outlined on the mesh and "
            f"the heat maps: {groups_text(c.device_groups, 16)}"
        )

    def rows(self, table: QTableWidget) -> list[list[str]]:
        """A table's cells as shown (hidden columns left out), top to bottom."""
        shown = [c for c in range(table.columnCount()) if not table.isColumnHidden(c)]
        return [[table.item(r, c).text() for c in shown] for r in range(table.rowCount())]

    def _on_tensor_selection(self) -> None:
        items = self.tensor_table.selectedItems()
        self._fill_shards(self.tensors[int(items[0].data(INDEX_ROLE))] if items else None)

    def _on_collective_selection(self) -> None:
        items = self.collective_table.selectedItems()
        if items:
            index = int(items[0].data(INDEX_ROLE))
            self.show_groups(index)
            if self.selection is not None and self.result is not None:
                # the device views outline them (the mesh editor scrolls them into view)
                self.selection.outline_groups(self.result.collectives[index].device_groups)
            self.collectiveSelected.emit(index)
