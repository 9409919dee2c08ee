"""Mesh editor: axes (name, size), presets, and the device order as a grid of cells.

The editor shows the mesh it was last given and turns every user edit into a new
backend ``Mesh`` emitted through ``meshEdited``; it redraws only when ``set_mesh`` hands
it the mesh the app accepted. Invalid edits show the backend's one-line message and
emit nothing.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QDrag, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import MeshError
from shardscope.backend.sharding.mesh import PRESETS, Mesh, MeshAxis
from shardscope.viewers.common.colors import axis_color, device_colors, text_color_on, theme_for
from shardscope.viewers.common.mime import DEVICE_MIME, device_from_mime, device_mime_data

MIN_POINT_SIZE = 8.0
MAX_CELL = 46
WRAP_1D = 16
MAX_DRAWN_DEVICES = 16384
PRESET_PROMPT = "Preset\u2026"


class DeviceGridView(QWidget):
    """The device order drawn as cells: 2-D as a grid, 3-D+ as a grid of grids, 1-D wrapped.

    Dragging one cell onto another emits ``swapRequested(position_a, position_b)``
    (row-major mesh positions).
    """

    swapRequested = Signal(int, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.mesh: Mesh | None = None
        self._cells: list[QRect] = []
        self._captions: list[tuple[QRect, str, QColor, Qt.AlignmentFlag]] = []
        self._highlight: set[int] = set()
        self._drop_target: int | None = None
        self._press: QPoint | None = None
        self._press_pos: int | None = None
        self._colors: list[QColor] = []
        self._cell = 28
        self._size = QSize(0, 0)
        self.setAcceptDrops(True)
        self.setMouseTracking(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 9.0))
        self.setFont(font)

    # -------------------------------------------------------------- layout

    def set_mesh(self, mesh: Mesh | None) -> None:
        self.mesh = mesh
        self._colors = device_colors(min(mesh.size, 256)) if mesh is not None else []
        self._drop_target = None
        self._relayout()
        self.update()

    def set_highlight(self, devices: set[int]) -> None:
        if devices != self._highlight:
            self._highlight = devices
            self.update()

    def sizeHint(self) -> QSize:
        return self._size

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.mesh is not None and event.oldSize() != event.size():
            self._relayout()

    def _available_width(self) -> int:
        parent = self.parentWidget()
        width = parent.width() if parent is not None else self.width()
        return max(width, 200)

    def _available_height(self) -> int:
        parent = self.parentWidget()
        height = parent.height() if parent is not None else self.height()
        return max(height, 120)

    def _relayout(self) -> None:
        self._cells = []
        self._captions = []
        mesh = self.mesh
        if mesh is None or mesh.size > MAX_DRAWN_DEVICES:
            self._size = QSize(0, 0)
            self.setMinimumSize(self._size)
            self.updateGeometry()
            return
        fm = QFontMetrics(self.font())
        min_cell = max(fm.horizontalAdvance(str(mesh.size - 1)) + 6, fm.height() + 4, 18)
        caption_h = fm.height() + 4
        sizes = mesh.axis_sizes
        names = mesh.axis_names
        if len(sizes) == 1:
            rows, cols = math.ceil(sizes[0] / WRAP_1D), min(sizes[0], WRAP_1D)
            blocks = 1
        else:
            rows, cols = sizes[-2], sizes[-1]
            blocks = math.prod(sizes[:-2])
        label_w = fm.horizontalAdvance(str(max(rows, cols))) + 10
        block_gap = 14
        avail = self._available_width() - 8
        # Blocks per row: as many as fit at the smallest legible cell, at most sqrt-ish.
        per_row = 1
        if blocks > 1:
            block_min = label_w + cols * (min_cell + 2) + block_gap
            per_row = max(1, min(blocks, avail // max(block_min, 1), math.ceil(math.sqrt(blocks))))
        fit = (avail - per_row * (label_w + block_gap)) // max(per_row * cols, 1) - 2
        block_rows = math.ceil(blocks / per_row)
        captions_h = block_rows * (caption_h * (2 if blocks > 1 else 1) + block_gap)
        fit_h = (self._available_height() - 8 - captions_h) // max(block_rows * rows, 1) - 2
        fit = min(fit, fit_h)
        cell = int(max(min_cell, min(MAX_CELL, fit)))
        self._cell = cell
        step = cell + 2
        block_w = label_w + cols * step + block_gap
        block_h = caption_h * (2 if blocks > 1 else 1) + rows * step + block_gap
        theme = theme_for(self)
        positions_per_block = rows * cols
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for b in range(blocks):
            bx = 4 + (b % per_row) * block_w
            by = 4 + (b // per_row) * block_h
            y0 = by
            if blocks > 1:
                coords = _unravel(b, sizes[:-2])
                text = ", ".join(f"{n}={c}" for n, c in zip(names[:-2], coords, strict=True))
                self._captions.append(
                    (QRect(bx, y0, block_w - block_gap, caption_h), text, theme.foreground, left)
                )
                y0 += caption_h
            if len(sizes) >= 2:
                row_text = f"{names[-2]} \u2193"
                row_w = fm.horizontalAdvance(row_text) + 12
                self._captions.append(
                    (QRect(bx, y0, row_w, caption_h), row_text, axis_color(mesh, names[-2]), left)
                )
                self._captions.append(
                    (
                        QRect(bx + row_w, y0, block_w, caption_h),
                        f"{names[-1]} \u2192",
                        axis_color(mesh, names[-1]),
                        left,
                    )
                )
            else:
                text = f"{names[0]} \u2192" + (
                    f"  (wrapped every {WRAP_1D})" if sizes[0] > WRAP_1D else ""
                )
                self._captions.append(
                    (
                        QRect(bx, y0, max(block_w, 240), caption_h),
                        text,
                        axis_color(mesh, names[0]),
                        left,
                    )
                )
            y0 += caption_h
            for r in range(rows):
                row_label = str(r) if len(sizes) >= 2 else str(r * WRAP_1D)
                color = axis_color(mesh, names[-2]) if len(sizes) >= 2 else theme.muted
                self._captions.append(
                    (QRect(bx, y0 + r * step, label_w - 4, cell), row_label, color, right)
                )
            for r in range(rows):
                for c in range(cols):
                    pos = b * positions_per_block + r * cols + c
                    if len(sizes) == 1 and pos >= sizes[0]:
                        continue
                    self._cells.append(QRect(bx + label_w + c * step, y0 + r * step, cell, cell))
        total_rows = math.ceil(blocks / per_row)
        self._size = QSize(8 + per_row * block_w, 8 + total_rows * block_h)
        self.setMinimumSize(self._size)
        self.updateGeometry()

    def cell_rect(self, position: int) -> QRect:
        """Rectangle of the cell at mesh position ``position``."""
        return self._cells[position]

    def position_at(self, point: QPoint) -> int | None:
        """Mesh position of the cell under ``point``, or None."""
        for i, rect in enumerate(self._cells):
            if rect.contains(point):
                return i
        return None

    # -------------------------------------------------------------- painting

    def paintEvent(self, event) -> None:
        mesh = self.mesh
        p = QPainter(self)
        theme = theme_for(self)
        p.fillRect(event.rect(), theme.background)
        if mesh is None:
            p.end()
            return
        if mesh.size > MAX_DRAWN_DEVICES:
            p.setPen(theme.muted)
            p.drawText(
                self.rect().adjusted(8, 8, -8, -8),
                Qt.AlignmentFlag.AlignLeft,
                f"{mesh.size} devices: too many to draw one cell each",
            )
            p.end()
            return
        p.setFont(self.font())
        dirty = event.rect()
        for rect, text, color, align in self._captions:
            if rect.intersects(dirty):
                p.setPen(_readable(color, theme))
                p.drawText(rect, align, text)
        order = mesh.device_order
        grid_pen = QPen(theme.grid, 1)
        for pos, rect in enumerate(self._cells):
            if not rect.intersects(dirty):
                continue
            dev = order[pos]
            fill = self._colors[dev % len(self._colors)]
            p.fillRect(rect, fill)
            p.setPen(grid_pen)
            p.drawRect(rect.adjusted(0, 0, -1, -1))
            p.setPen(text_color_on(fill))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(dev))
            if dev in self._highlight:
                pen = QPen(theme.highlight, 3)
                p.setPen(pen)
                p.drawRect(rect.adjusted(1, 1, -2, -2))
            if pos == self._drop_target:
                pen = QPen(theme.foreground, 2, Qt.PenStyle.DashLine)
                p.setPen(pen)
                p.drawRect(rect.adjusted(1, 1, -2, -2))
        p.end()

    def changeEvent(self, event) -> None:
        if event.type() == event.Type.PaletteChange and self.mesh is not None:
            self._relayout()
            self.update()
        super().changeEvent(event)

    # -------------------------------------------------------------- drag and drop

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
            self._press_pos = self.position_at(self._press)
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        self._press = None
        self._press_pos = None
        super().mouseReleaseEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._press is None or self._press_pos is None:
            return
        if (
            event.position().toPoint() - self._press
        ).manhattanLength() < QApplication.startDragDistance():
            return
        source = self._press_pos
        self._press = None
        self._press_pos = None
        drag = QDrag(self)
        drag.setMimeData(device_mime_data(source))
        drag.exec(Qt.DropAction.MoveAction)

    def _accepts(self, event) -> bool:
        return event.source() is self and event.mimeData().hasFormat(DEVICE_MIME)

    def dragEnterEvent(self, event) -> None:
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if not self._accepts(event):
            event.ignore()
            return
        target = self.position_at(event.position().toPoint())
        if target != self._drop_target:
            self._drop_target = target
            self.update()
        event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:
        self._drop_target = None
        self.update()

    def dropEvent(self, event) -> None:
        self._drop_target = None
        self.update()
        if not self._accepts(event):
            event.ignore()
            return
        event.acceptProposedAction()
        self.drop_device(
            device_from_mime(event.mimeData()), self.position_at(event.position().toPoint())
        )

    def drop_device(self, source: int | None, target: int | None) -> None:
        """Handle a device cell at ``source`` dropped on the cell at ``target``."""
        if source is None or target is None or source == target:
            return
        self.swapRequested.emit(source, target)


def _readable(color: QColor, theme) -> QColor:
    """``color`` for text, lifted or darkened where it would vanish into the background."""
    bg = theme.background.lightness()
    if abs(color.lightness() - bg) >= 90:
        return color
    return color.lighter(160) if theme.is_dark else color.darker(160)


def _unravel(index: int, sizes) -> tuple[int, ...]:
    out = []
    for s in reversed(sizes):
        out.append(index % s)
        index //= s
    return tuple(reversed(out))


class MeshEditor(QWidget):
    """Edit a mesh's axes and device order; emits a new Mesh per valid edit."""

    meshEdited = Signal(object)
    validationMessage = Signal(str)

    NAME_COL, SIZE_COL = 0, 1

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._mesh: Mesh | None = None
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

        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["axis", "size"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(
            1, QHeaderView.ResizeMode.ResizeToContents
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSizeAdjustPolicy(QAbstractItemView.SizeAdjustPolicy.AdjustToContents)
        self.table.itemChanged.connect(self._on_item_changed)

        self.add_button = QPushButton("Add axis")
        self.remove_button = QPushButton("Remove axis")
        self.add_button.clicked.connect(self._on_add)
        self.remove_button.clicked.connect(self._on_remove)

        self.grid = DeviceGridView()
        self.grid.swapRequested.connect(self._on_swap)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.grid)
        self.scroll.setWidgetResizable(True)
        self.scroll.setMinimumHeight(120)
        self.grid_caption = QLabel("Device order \u2014 drag a device onto another to swap them")

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        top = QHBoxLayout()
        top.addWidget(self.preset_combo)
        top.addWidget(self.summary, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
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

    def set_mesh(self, mesh: Mesh | None) -> None:
        """Show ``mesh``: its axes in the table and its device order in the grid."""
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
        self.summary.setText(
            f"{mesh.size} device{'s' if mesh.size != 1 else ''}"
            + ("" if mesh.is_iota else " \u00b7 custom order")
            if mesh is not None
            else ""
        )
        self.grid.set_mesh(mesh)
        self._apply_message("")

    def _fit_table_height(self) -> None:
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + rows + 2 * self.table.frameWidth() + 2)

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

    def _paint_row(self, row: int, name: str) -> None:
        item = self.table.item(row, self.NAME_COL)
        if item is None or self._mesh is None:
            return
        color = (
            axis_color(self._mesh, name)
            if name in self._mesh.axis_names
            else axis_color([f"_{i}" for i in range(row)] + [name], name)
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
        if not self._updating:
            self._emit_edit(self._table_axes(), self._types)

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
