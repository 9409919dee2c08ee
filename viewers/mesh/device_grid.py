"""The mesh's device order drawn as cells, one per device; drag a cell onto another to swap.

2-D meshes draw as a grid, 3-D and more as a grid of grids (one per coordinate of the
leading axes), 1-D wrapped into rows. On a mesh laid over several hosts (``set_hosts``) a
thick line runs between neighbouring cells of different hosts (``boundaries``), each
cell names its host in a corner where it is large enough (its tooltip always does), and
a line below the cells says which devices each host owns; a new host count repaints only
the cells whose host changed. Outlining devices (``set_highlight``, ``set_groups``) emits
``outlined`` with the rectangle of the outlined cells, for the editor to scroll to it. A
grid given the window's ``Selection`` outlines its device groups and hovered devices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QDrag, QFont, QFontMetrics, QPainter, QPen, QRegion
from PySide6.QtWidgets import QApplication, QSizePolicy, QToolTip, QWidget

from shardscope.backend.session.selection import Selection
from shardscope.backend.sharding.device_groups import unravel
from shardscope.backend.sharding.hosts import Hosts
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.colors import (
    axis_color,
    device_colors,
    readable_color,
    text_color_on,
    theme_for,
)
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.mime import DEVICE_MIME, device_from_mime, device_mime_data

MAX_CELL = 46
WRAP_1D = 16
MAX_DRAWN_DEVICES = 16384
# Outlines of a collective's device groups: one colour per group, repeating.
GROUP_COLORS = ("#D64545", "#2E7D32", "#6A1B9A", "#0277BD", "#EF6C00", "#00838F", "#AD1457")
# Pixels across a host boundary line (it covers the 2-pixel gap and a pixel of each cell).
BOUNDARY = 4
# The smallest cell that names its host in a corner.
HOST_LABEL_CELL = 30


class DeviceGridView(QWidget):
    """The device order drawn as cells: 2-D as a grid, 3-D+ as a grid of grids, 1-D wrapped.

    Dragging one cell onto another emits ``swapRequested(position_a, position_b)``
    (row-major mesh positions).
    """

    swapRequested = Signal(int, int)
    outlined = Signal(QRect)  # the cells just outlined (a hovered tile's, a collective's)

    def __init__(self, parent: QWidget | None = None, *, selection: Selection | None = None):
        """``selection``: outline its device groups and hovered devices as they change."""
        super().__init__(parent)
        self.mesh: Mesh | None = None
        self._links = Connections()
        self._cells: list[QRect] = []
        self._captions: list[tuple[QRect, str, QColor, Qt.AlignmentFlag]] = []
        self._highlight: set[int] = set()
        self._group_of: dict[int, int] = {}  # device id -> index of its outlined group
        self._drop_target: int | None = None
        self._press: QPoint | None = None
        self._press_pos: int | None = None
        self._colors: list[QColor] = []
        self._hosts: Hosts | None = None
        self._host_of: list[int] = []  # mesh position -> host (empty: one host)
        self._legend: QRect | None = None  # the hosts' line below the cells
        self._cell = 28
        self._size = QSize(0, 0)
        self.setAcceptDrops(True)
        self.setMouseTracking(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        font = QFont(self.font())
        font.setPointSizeF(max(font.pointSizeF(), 9.0))
        self.setFont(font)
        if selection is not None:
            self.follow(selection)

    def follow(self, selection: Selection) -> None:
        """Outline ``selection``'s device groups and hovered devices, now and as they
        change (instead of any selection followed before)."""
        self._links.close()
        self._links.connect(selection.events.device_groups, self.set_groups)
        self._links.connect(selection.events.hovered_devices, self.set_highlight)
        self.set_groups(list(selection.device_groups))
        self.set_highlight(set(selection.hovered_devices))

    def detach(self) -> None:
        """Stop following the selection."""
        self._links.close()

    # -------------------------------------------------------------- layout

    def set_mesh(self, mesh: Mesh | None) -> None:
        self.mesh = mesh
        self._colors = device_colors(min(mesh.size, 256)) if mesh is not None else []
        self._drop_target = None
        hosts = self._hosts
        if mesh is None or hosts is None or hosts.devices != mesh.size:
            self._hosts = None
        self._host_of = self._hosts_of_positions()
        self._relayout()
        self.update()

    def set_hosts(self, hosts: Hosts | None) -> None:
        """Draw the boundaries between ``hosts`` (None or one host: none). Repaints the
        cells whose host changed, or everything where the legend line comes or goes."""
        if hosts is not None and (self.mesh is None or hosts.devices != self.mesh.size):
            hosts = None
        if hosts == self._hosts:
            return
        before = self._host_of
        self._hosts = hosts
        self._host_of = self._hosts_of_positions()
        if bool(before) != bool(self._host_of):
            self._relayout()
            self.update()
            return
        dirty = QRegion()
        for pos, rect in enumerate(self._cells):
            if before[pos] != self._host_of[pos]:
                dirty += rect.adjusted(-BOUNDARY, -BOUNDARY, BOUNDARY, BOUNDARY)
        if self._legend is not None:
            wide = QFontMetrics(self.font()).horizontalAdvance(self.host_text()) + 8
            if wide > self._legend.width():
                self._relayout()
                self.update()
                return
            dirty += self._legend
        if not dirty.isEmpty():
            self.update(dirty)

    def _hosts_of_positions(self) -> list[int]:
        hosts, mesh = self._hosts, self.mesh
        if hosts is None or mesh is None or hosts.count < 2 or mesh.size > MAX_DRAWN_DEVICES:
            return []
        return [hosts.of_device(d) for d in mesh.device_order]

    @property
    def hosts(self) -> Hosts | None:
        """The hosts drawn (None: one host)."""
        return self._hosts if self._host_of else None

    def host_at(self, position: int) -> int | None:
        """The host of the cell at mesh position ``position`` (None: one host)."""
        return self._host_of[position] if self._host_of else None

    def host_text(self) -> str:
        """The hosts' line below the cells ("" for one host): which devices each owns."""
        hosts = self.hosts
        if hosts is None:
            return ""
        n = hosts.per_host
        own = " · ".join(
            f"h{k} {k * n}–{(k + 1) * n - 1}" if n > 1 else f"h{k} {k}"
            for k in range(min(hosts.count, 8))
        )
        more = f" · … h{hosts.count - 1}" if hosts.count > 8 else ""
        return f"{hosts.count} hosts, {n} device{'s' if n != 1 else ''} each: {own}{more}"

    def boundaries(self) -> list[tuple[int, int]]:
        """Pairs of neighbouring cells (mesh positions, the right or lower one second)
        that lie on different hosts: where a thick line is drawn."""
        if not self._host_of or self.mesh is None:
            return []
        out = []
        for a, b in self._neighbours():
            if self._host_of[a] != self._host_of[b]:
                out.append((a, b))
        return out

    def _neighbours(self) -> list[tuple[int, int]]:
        """Each cell with the one right of it and the one below it, as drawn."""
        mesh = self.mesh
        assert mesh is not None
        sizes = mesh.axis_sizes
        n = len(self._cells)
        if len(sizes) == 1:
            rows, cols = math.ceil(sizes[0] / WRAP_1D), min(sizes[0], WRAP_1D)
        else:
            rows, cols = sizes[-2], sizes[-1]
        block = rows * cols
        out = []
        for pos in range(n):
            r, c = (pos % block) // cols, pos % cols
            if c + 1 < cols and pos + 1 < n:
                out.append((pos, pos + 1))
            if r + 1 < rows and pos + cols < n:
                out.append((pos, pos + cols))
        return out

    def boundary_rect(self, a: int, b: int) -> QRect:
        """The line drawn between the cells at positions ``a`` and ``b`` (``b`` right of
        or below ``a``)."""
        ra, rb = self._cells[a], self._cells[b]
        if rb.left() > ra.right():
            return QRect(ra.right(), ra.top() - 1, rb.left() - ra.right() + 1, ra.height() + 2)
        return QRect(ra.left() - 1, ra.bottom(), ra.width() + 2, rb.top() - ra.bottom() + 1)

    def set_highlight(self, devices: set[int] | frozenset[int]) -> None:
        """Outline the cells of ``devices`` (a hovered tile's); an empty set removes it."""
        if devices != self._highlight:
            self._highlight = set(devices)
            self.update()
            self._emit_outlined(devices)

    def set_groups(self, groups: Sequence[Sequence[int]]) -> None:
        """Outline each group of device ids (a collective's groups) in its own colour;
        an empty list removes the outlines."""
        group_of = {int(d): i for i, group in enumerate(groups) for d in group}
        if group_of != self._group_of:
            self._group_of = group_of
            self.update()
            self._emit_outlined(set(group_of))

    def outlined_rect(self, devices: set[int]) -> QRect:
        """The rectangle around the cells of ``devices`` (empty if none is drawn)."""
        rect = QRect()
        if self.mesh is None:
            return rect
        for pos, dev in enumerate(self.mesh.device_order[: len(self._cells)]):
            if dev in devices:
                rect = rect.united(self._cells[pos])
        return rect

    def _emit_outlined(self, devices: set[int]) -> None:
        rect = self.outlined_rect(devices) if devices else QRect()
        if not rect.isEmpty():
            self.outlined.emit(rect)

    @property
    def groups(self) -> list[tuple[int, ...]]:
        """The outlined groups, in the order given to ``set_groups``."""
        out: dict[int, list[int]] = {}
        for dev, i in self._group_of.items():
            out.setdefault(i, []).append(dev)
        return [tuple(out[i]) for i in sorted(out)]

    def group_color(self, index: int) -> QColor:
        return QColor(GROUP_COLORS[index % len(GROUP_COLORS)])

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
        self._legend = None
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
        row_text, col_text = f"{names[0]} \u2193", f"{names[-1]} \u2192"
        row_w = heads_w = 0
        # A block is never narrower than its headers, or they run into the next block's.
        if len(sizes) >= 2:
            row_text = f"{names[-2]} \u2193"
            row_w = fm.horizontalAdvance(row_text) + 12
            heads_w = row_w + fm.horizontalAdvance(col_text) + 4
        if blocks > 1:
            widest = ", ".join(f"{n}={s - 1}" for n, s in zip(names[:-2], sizes[:-2], strict=True))
            heads_w = max(heads_w, fm.horizontalAdvance(widest) + 4)
        # Blocks per row: as many as fit at the smallest legible cell, at most sqrt-ish.
        per_row = 1
        if blocks > 1:
            block_min = max(label_w + cols * (min_cell + 2), heads_w) + block_gap
            per_row = max(1, min(blocks, avail // max(block_min, 1), math.ceil(math.sqrt(blocks))))
        fit = (avail - per_row * (label_w + block_gap)) // max(per_row * cols, 1) - 2
        block_rows = math.ceil(blocks / per_row)
        captions_h = block_rows * (caption_h * (2 if blocks > 1 else 1) + block_gap)
        fit_h = (self._available_height() - 8 - captions_h) // max(block_rows * rows, 1) - 2
        fit = min(fit, fit_h)
        cell = int(max(min_cell, min(MAX_CELL, fit)))
        self._cell = cell
        step = cell + 2
        block_w = max(label_w + cols * step, heads_w) + block_gap
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
                coords = unravel(b, sizes[:-2])
                text = ", ".join(f"{n}={c}" for n, c in zip(names[:-2], coords, strict=True))
                self._captions.append(
                    (QRect(bx, y0, block_w - block_gap, caption_h), text, theme.foreground, left)
                )
                y0 += caption_h
            if len(sizes) >= 2:
                self._captions.append(
                    (QRect(bx, y0, row_w, caption_h), row_text, axis_color(mesh, names[-2]), left)
                )
                self._captions.append(
                    (
                        QRect(bx + row_w, y0, block_w - block_gap - row_w, caption_h),
                        col_text,
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
        self._legend = None
        if self._host_of:
            text = self.host_text()
            width = fm.horizontalAdvance(text) + 8
            # As wide as the view: another host count's line repaints in place.
            room = max(width, self._available_width() - 8)
            self._legend = QRect(4, self._size.height() - 4, room, caption_h)
            self._size = QSize(max(self._size.width(), width + 8), self._size.height() + caption_h)
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
                p.setPen(readable_color(color, theme))
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
            group = self._group_of.get(dev)
            if group is not None:
                p.setPen(QPen(self.group_color(group), 4))
                p.drawRect(rect.adjusted(2, 2, -3, -3))
                if self._cell >= 34:
                    p.setPen(text_color_on(fill))
                    top_left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
                    p.drawText(rect.adjusted(5, 3, 0, 0), top_left, f"g{group}")
            if dev in self._highlight:
                pen = QPen(theme.highlight, 3)
                p.setPen(pen)
                p.drawRect(rect.adjusted(1, 1, -2, -2))
            if pos == self._drop_target:
                pen = QPen(theme.foreground, 2, Qt.PenStyle.DashLine)
                p.setPen(pen)
                p.drawRect(rect.adjusted(1, 1, -2, -2))
            if self._host_of and self._cell >= HOST_LABEL_CELL:
                p.setPen(text_color_on(fill))
                corner = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom
                small = QFont(self.font())
                small.setPointSizeF(max(self.font().pointSizeF() * 0.75, 6.5))
                p.setFont(small)
                p.drawText(rect.adjusted(0, 0, -3, -1), corner, f"h{self._host_of[pos]}")
                p.setFont(self.font())
        self._paint_boundaries(p, dirty, theme)
        if self._legend is not None and self._legend.intersects(dirty):
            p.setPen(theme.foreground)
            left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
            p.drawText(self._legend, left, self.host_text())
        p.end()

    def _paint_boundaries(self, p: QPainter, dirty: QRect, theme) -> None:
        for a, b in self.boundaries():
            line = self.boundary_rect(a, b)
            if line.intersects(dirty):
                p.fillRect(line, theme.foreground)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.mesh is not None:
            pos = self.position_at(event.pos())
            if pos is None:
                QToolTip.hideText()
                event.ignore()
                return True
            dev = self.mesh.device_order[pos]
            host = self.host_at(pos)
            where = f" on host {host}" if host is not None else ""
            QToolTip.showText(event.globalPos(), f"device {dev}{where}", self)
            return True
        return super().event(event)

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
