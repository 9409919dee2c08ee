"""Mesh editor: axes (name, size), presets, hosts, and the device order as a grid of cells.

The editor shows the mesh it was last given and turns every user edit into a new
backend ``Mesh`` emitted through ``meshEdited``; it redraws only when ``set_mesh`` hands
it the mesh the app accepted. Invalid edits show the backend's one-line message and
emit nothing.

The hosts the mesh lies over (``backend.session.host_layout``): a Hosts spin box beside
the presets (``hostsEdited(count)``), and per axis the hosts along it, its DCN factor
(``dcnEdited(axis, factor)``; 1: the axis stays within a host), and how it lies
(``axis_spans``: ICI, DCN or both). ``set_hosts`` shows the layout the app accepted; the
device grid draws the host boundaries. A count or factor that does not fit is refused
with the backend's one-line message below the grid, and the boxes show the layout again.

Cells outlined on the grid (a hovered tile's devices, a chosen collective's groups) are
scrolled into view in every scroll area the grid sits in (``reveal_rect``): the grid's own
and the dock's, when the dock is too short to show the grid whole, as soon as the event
loop runs again. Given the session, the editor shows its mesh and hosts as they change;
given the window's ``Selection``, the grid outlines what it holds.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import MeshError
from shardscope.backend.session.document import Session
from shardscope.backend.session.host_layout import (
    MAX_HOSTS,
    HostLayout,
    shown_factors,
    spans,
    with_count,
    with_factor,
)
from shardscope.backend.session.selection import Selection
from shardscope.backend.sharding.mesh import PRESETS, Mesh, MeshAxis
from shardscope.viewers.common.colors import axis_color, theme_for
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.mesh.device_grid import DeviceGridView

PRESET_PROMPT = "Preset\u2026"
# Pixels of the grid shown around outlined cells scrolled into view.
REVEAL_MARGIN = 6
# How an axis lies across hosts, as its link cell says it, and what that means.
SPAN_TEXT = {"ici": "ICI", "dcn": "DCN", "both": "both"}
SPAN_TIP = {
    "ici": "ICI: every step along this axis stays on one host",
    "dcn": "DCN: every step along this axis crosses hosts",
    "both": "both: some steps along this axis stay on a host and some cross hosts",
}


class MeshEditor(QWidget):
    """Edit a mesh's axes and device order; emits a new Mesh per valid edit."""

    meshEdited = Signal(object)
    validationMessage = Signal(str)
    hostsEdited = Signal(int)
    dcnEdited = Signal(str, int)

    NAME_COL, SIZE_COL, HOSTS_COL, LINK_COL = 0, 1, 2, 3

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        session: Session | None = None,
        selection: Selection | None = None,
    ):
        """``session``: show its mesh and host layout as they change; ``selection``: the
        grid outlines its device groups and hovered devices."""
        super().__init__(parent)
        self._mesh: Mesh | None = None
        self._layout = HostLayout()
        self._types: list = []
        self._updating = False

        self.preset_combo = QComboBox()
        self.preset_combo.addItem(PRESET_PROMPT)
        for name in PRESETS:
            self.preset_combo.addItem(name)
        self.preset_combo.setToolTip(
            "Replace the mesh with a preset (1-D, 2-D, 3-D, TPU topologies)"
        )
        self.preset_combo.activated.connect(self._on_preset_chosen)
        self.summary = QLabel()
        self.hosts_spin = QSpinBox()
        self.hosts_spin.setRange(1, MAX_HOSTS)
        self.hosts_spin.setKeyboardTracking(False)  # a typed count counts once it is whole
        self.hosts_spin.setToolTip(
            "Hosts the mesh lies over: each owns an equal block of the devices (the count "
            "must divide the mesh's size). Set the hosts along an axis in the table to lay "
            "them out as create_hybrid_device_mesh does."
        )
        self.hosts_spin.valueChanged.connect(self._on_hosts_changed)
        self.hosts_label = QLabel("&Hosts")
        self.hosts_label.setBuddy(self.hosts_spin)
        self.hosts_note = QLabel()
        self.hosts_note.setWordWrap(True)

        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["axis", "size", "hosts", "link"])
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (self.SIZE_COL, self.HOSTS_COL, self.LINK_COL):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeaderItem(self.HOSTS_COL).setToolTip(
            "Hosts along the axis (its DCN factor): 1 keeps the axis within a host (ICI)"
        )
        self.table.horizontalHeaderItem(self.LINK_COL).setToolTip(
            "How the axis lies: ICI (within a host), DCN (across hosts) or both"
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.table.itemChanged.connect(self._on_item_changed)

        self.add_button = QPushButton("Add axis")
        self.remove_button = QPushButton("Remove axis")
        self.add_button.clicked.connect(self._on_add)
        self.remove_button.clicked.connect(self._on_remove)

        self.grid = DeviceGridView(selection=selection)
        self._links = Connections()
        if session is not None:
            self._links.connect(session.events.mesh, self._on_session_mesh)
            self._links.connect(session.events.hosts, self.set_hosts)
        self.grid.swapRequested.connect(self._on_swap)
        # Scrolled to once the event loop runs again: after whatever else the code that
        # outlined them scrolls in the same turn, and once for many outlines in a row.
        self._reveal: QRect | None = None
        self._reveal_timer = QTimer(self)
        self._reveal_timer.setSingleShot(True)
        self._reveal_timer.setInterval(0)
        self._reveal_timer.timeout.connect(self._reveal_pending)
        self.grid.outlined.connect(self._on_outlined)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.grid)
        self.scroll.setWidgetResizable(True)
        self.scroll.setMinimumHeight(120)
        self.grid_caption = QLabel("Device order \u2014 drag a device onto another to swap them")
        self.grid_caption.setWordWrap(True)  # the dock is narrow: the table needs its width

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        top = QHBoxLayout()
        top.addWidget(self.preset_combo)
        top.addWidget(self.summary, 1)
        hosts_row = QHBoxLayout()
        hosts_row.addWidget(self.hosts_label)
        hosts_row.addWidget(self.hosts_spin)
        hosts_row.addWidget(self.hosts_note, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addLayout(hosts_row)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        layout.addWidget(self.grid_caption)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.message)
        self._apply_message("")

    # -------------------------------------------------------------- setters

    @property
    def mesh(self) -> Mesh | None:
        """The mesh last given to ``set_mesh``."""
        return self._mesh

    def detach(self) -> None:
        """Stop following the session and the selection."""
        self._links.close()
        self.grid.detach()

    def _on_session_mesh(self, mesh: Mesh | None) -> None:
        if self._mesh != mesh:
            self.set_mesh(mesh)

    def set_mesh(self, mesh: Mesh | None) -> None:
        """Show ``mesh``: its axes in the table and its device order in the grid (with the
        host layout last given, where it still fits)."""
        self._mesh = mesh
        self._types = list(mesh.axis_types) if mesh is not None else []
        self._updating = True
        try:
            self.table.setRowCount(0)
            for a in mesh.axes if mesh is not None else ():
                self._append_row(a.name, a.size)
        finally:
            self._updating = False
        self._fit_table_height()
        self.remove_button.setEnabled(mesh is not None and len(mesh.axes) > 1)
        self.grid.set_mesh(mesh)
        layout = self._layout
        try:
            if mesh is not None:
                layout.check(mesh)
        except MeshError:
            layout = HostLayout()
        self.set_hosts(layout)
        self._apply_message("")

    @property
    def host_layout(self) -> HostLayout:
        """The host layout last given to ``set_hosts``."""
        return self._layout

    def set_hosts(self, layout: HostLayout) -> None:
        """Show ``layout``: the host count, each axis' hosts and link, the grid's host
        boundaries."""
        self._layout = layout
        mesh = self._mesh
        factors = shown_factors(mesh, layout) if mesh is not None else None
        lies = spans(mesh, layout) if mesh is not None else {}
        self._updating = True
        try:
            self.hosts_spin.setValue(layout.count)
            for row, name in enumerate(mesh.axis_names if mesh is not None else ()):
                spin = self.factor_spin(row)
                if spin is not None:
                    spin.setValue(factors[name] if factors is not None else 1)
                    spin.setToolTip(
                        f"Hosts along {name} (its DCN factor; 1: {name} stays within a host)"
                        if factors is not None
                        else f"The device order is not a hybrid layout: set the hosts along "
                        f"{name} to lay the mesh out afresh"
                    )
                link = self.table.item(row, self.LINK_COL)
                if link is not None:
                    span = lies.get(name, "ici")
                    link.setText(SPAN_TEXT[span] if layout.multi else "")
                    link.setToolTip(SPAN_TIP[span] if layout.multi else "One host: all ICI")
        finally:
            self._updating = False
        self.grid.set_hosts(layout.hosts(mesh) if mesh is not None and layout.multi else None)
        self._show_summary()

    def _show_summary(self) -> None:
        mesh, layout = self._mesh, self._layout
        if mesh is None:
            self.summary.setText("")
            self.hosts_note.setText("")
            return
        text = f"{mesh.size} device{'s' if mesh.size != 1 else ''}"
        if not mesh.is_iota and layout.dcn is None:
            text += " \u00b7 custom order"
        self.summary.setText(text)
        each = mesh.size // layout.count
        note = f"{each} device{'s' if each != 1 else ''} per host" if layout.multi else "one host"
        if layout.dcn is not None:
            note += f" \u00b7 DCN {layout.dcn_text}"
        self.hosts_note.setText(note)

    def factor_spin(self, row: int) -> QSpinBox | None:
        """The hosts-along-the-axis spin box of table row ``row``."""
        return self.table.cellWidget(row, self.HOSTS_COL)

    def link_text(self, row: int) -> str:
        """How the axis of table row ``row`` lies (``ICI``, ``DCN``, ``both``; "" for one
        host)."""
        item = self.table.item(row, self.LINK_COL)
        return item.text() if item is not None else ""

    def show_message(self, text: str) -> None:
        """Say ``text`` below the grid (a refused edit); "" clears it."""
        self._apply_message(text)

    def _fit_table_height(self) -> None:
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + rows + 2 * self.table.frameWidth() + 2)

    def _on_outlined(self, rect: QRect) -> None:
        self._reveal = QRect(rect)
        self._reveal_timer.start()

    def _reveal_pending(self) -> None:
        rect, self._reveal = self._reveal, None
        if rect is not None:
            self.reveal_rect(rect)

    def reveal_rect(self, rect: QRect) -> None:
        """Scroll each scroll area the grid sits in, innermost first, until ``rect`` (in
        the grid's coordinates) is in view: whole where it fits, else its top left."""
        widget: QWidget = self.grid
        box = QRect(rect)
        parent = widget.parentWidget()
        while parent is not None:
            if isinstance(parent, QScrollArea) and parent.widget() is not None:
                widget, box = parent.viewport(), _scroll_to(parent, widget, box)
                if box.isEmpty():
                    return
            parent = parent.parentWidget()

    def highlight_devices(self, devices: list[int]) -> None:
        """Outline the cells of ``devices`` (e.g. those holding a hovered tile)."""
        self.grid.set_highlight({int(d) for d in devices})

    def size_spin(self, row: int) -> QSpinBox:
        """The size spin box of table row ``row``."""
        return self.table.cellWidget(row, self.SIZE_COL)

    # -------------------------------------------------------------- table

    def _append_row(self, name: str, size: int) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        item = QTableWidgetItem(name)
        item.setToolTip("Double-click to rename")
        self.table.setItem(row, self.NAME_COL, item)
        self._paint_row(row, name)
        spin = QSpinBox()
        spin.setRange(0, 4096)
        spin.setValue(int(size))
        spin.setToolTip("Number of devices along this axis")
        spin.valueChanged.connect(self._on_size_changed)
        self.table.setCellWidget(row, self.SIZE_COL, spin)
        hosts = QSpinBox()
        hosts.setRange(1, max(1, min(int(size), MAX_HOSTS)))
        hosts.setKeyboardTracking(False)
        hosts.valueChanged.connect(lambda value, r=row: self._on_factor_changed(r, value))
        self.table.setCellWidget(row, self.HOSTS_COL, hosts)
        link = QTableWidgetItem("")
        link.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        self.table.setItem(row, self.LINK_COL, link)

    def _paint_row(self, row: int, name: str) -> None:
        item = self.table.item(row, self.NAME_COL)
        if item is None or self._mesh is None:
            return
        color = (
            axis_color(self._mesh, name)
            if name in self._mesh.axis_names
            else axis_color((*self._mesh.axis_names, name), name, remember=False)
        )
        item.setData(Qt.ItemDataRole.DecorationRole, color)

    def _table_axes(self) -> list[tuple[str, int]]:
        out = []
        for row in range(self.table.rowCount()):
            item = self.table.item(row, self.NAME_COL)
            spin = self.size_spin(row)
            out.append(((item.text() if item else "").strip(), spin.value() if spin else 0))
        return out

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if not self._updating and item.column() == self.NAME_COL:
            self._emit_edit(self._table_axes(), self._types)

    def _on_hosts_changed(self, count: int) -> None:
        if self._updating or self._mesh is None:
            return
        mesh, layout = self._mesh, self._layout
        if count == layout.count:
            return
        self._ask(lambda: with_count(mesh, layout, count), lambda: self.hostsEdited.emit(count))

    def _on_factor_changed(self, row: int, factor: int) -> None:
        mesh, layout = self._mesh, self._layout
        if self._updating or mesh is None or not 0 <= row < len(mesh.axes):
            return
        name = mesh.axis_names[row]
        self._ask(
            lambda: with_factor(mesh, layout, name, factor),
            lambda: self.dcnEdited.emit(name, factor),
        )

    def _ask(self, check, emit) -> None:
        """Emit a host edit ``check`` accepts; else say why and show the layout again."""
        try:
            check()
        except MeshError as exc:
            self._apply_message(str(exc))
            self.validationMessage.emit(str(exc))
            self.set_hosts(self._layout)
            return
        self._apply_message("")
        self.validationMessage.emit("")
        emit()

    def _on_size_changed(self, _value: int) -> None:
        if not self._updating:
            self._emit_edit(self._table_axes(), self._types)

    def _on_add(self) -> None:
        axes = self._table_axes()
        taken = {n for n, _ in axes}
        k = len(axes)
        while f"axis_{k}" in taken:
            k += 1
        self._emit_edit(axes + [(f"axis_{k}", 2)], self._types + [None])

    def _on_remove(self) -> None:
        axes = self._table_axes()
        if not axes:
            return
        row = self.table.currentRow()
        if row < 0 or row >= len(axes):
            row = len(axes) - 1
        types = list(self._types)
        del axes[row]
        if row < len(types):
            del types[row]
        self._emit_edit(axes, types)

    def _on_preset_chosen(self, index: int) -> None:
        name = self.preset_combo.itemText(index)
        self.preset_combo.setCurrentIndex(0)
        if name in PRESETS:
            self.choose_preset(name)

    def choose_preset(self, name: str) -> None:
        """Ask for preset ``name`` (a key of ``shardscope.backend.sharding.mesh.PRESETS``)."""
        self._apply_message("")
        self.meshEdited.emit(PRESETS[name])

    def _on_swap(self, a: int, b: int) -> None:
        mesh = self._mesh
        if mesh is None:
            return
        order = list(mesh.device_order)
        order[a], order[b] = order[b], order[a]
        self._emit_mesh(lambda: Mesh(mesh.axes, tuple(order), mesh.axis_types))

    def _emit_edit(self, axes: list[tuple[str, int]], types: list) -> None:
        mesh = self._mesh

        def build() -> Mesh:
            new_axes = tuple(MeshAxis(n, s) for n, s in axes)
            size = math.prod(s for _, s in axes) if axes else 0
            keep_order = mesh is not None and size == mesh.size
            known = [t for t in types[: len(new_axes)]]
            full_types = tuple(
                (known[i] if i < len(known) and known[i] is not None else "Auto")
                for i in range(len(new_axes))
            )
            return Mesh(new_axes, mesh.device_order if keep_order else (), full_types)

        if mesh is None:
            return

        self._emit_mesh(build)

    def _emit_mesh(self, build) -> None:
        try:
            new = build()
        except MeshError as exc:
            self._apply_message(str(exc))
            self.validationMessage.emit(str(exc))
            return
        self._apply_message("")
        self.validationMessage.emit("")
        self.meshEdited.emit(new)

    def _apply_message(self, text: str) -> None:
        theme = theme_for(self)
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {theme.error.name()};" if text else "")
        self.message.setVisible(bool(text))


def _scroll_to(scroll: QScrollArea, widget: QWidget, box: QRect) -> QRect:
    """Scroll ``scroll`` to show ``box`` (in the coordinates of ``widget``, its content or
    a widget inside it); the part of ``box`` then in view, in its viewport's coordinates."""
    content = scroll.widget()
    inner = box if widget is content else QRect(widget.mapTo(content, box.topLeft()), box.size())
    scroll.ensureVisible(inner.right(), inner.bottom(), REVEAL_MARGIN, REVEAL_MARGIN)
    scroll.ensureVisible(inner.left(), inner.top(), REVEAL_MARGIN, REVEAL_MARGIN)
    port = scroll.viewport()
    return QRect(content.mapTo(port, inner.topLeft()), inner.size()).intersected(port.rect())
