"""The reshard picture: the mesh, one cell per device, each cell a miniature of the whole
tensor with the piece the device holds; the parts that travel fly from their sending
device's cell to the receiving one's (``ReshardPicture.play``), and the last frame, which
stays, shows the new pieces with an arrow per move."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, QSize, Qt, QVariantAnimation
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from shardscope.viewers.common.colors import device_colors, theme_for
from shardscope.viewers.run.heatmap import mesh_layout

if TYPE_CHECKING:
    from shardscope.backend.run.reshard import Box, ReshardPlan
    from shardscope.backend.sharding.mesh import Mesh

MAX_CELL = 120
MIN_CELL = 40
GAP = 18
MAX_DRAWN_MOVES = 512
DURATION_MS = 1600
HELD = QColor("#5B8FD6")


def _mini(box: Box, shape: tuple[int, ...], cell: QRectF, dims: tuple[int, int] = (0, 1)) -> QRectF:
    """Where ``box`` of a ``shape`` tensor sits in a miniature of it drawn in ``cell``:
    rows along dimension ``dims[0]``, columns along ``dims[1]`` (1-D: one row)."""
    if not shape:
        return QRectF(cell)
    if len(shape) == 1:
        rows, cols = (0, 1), box[0]
        n_rows, n_cols = 1, shape[0]
    else:
        down, across = dims
        rows, cols = box[down], box[across]
        n_rows, n_cols = shape[down], shape[across]
    fx = cell.width() / max(n_cols, 1)
    fy = cell.height() / max(n_rows, 1)
    return QRectF(
        cell.x() + cols[0] * fx,
        cell.y() + rows[0] * fy,
        (cols[1] - cols[0]) * fx,
        (rows[1] - rows[0]) * fy,
    )


class ReshardPicture(QWidget):
    """The mesh with each device's piece, and the moves of a ``ReshardPlan`` flying."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: ReshardPlan | None = None
        self.mesh: Mesh | None = None
        self.progress = 1.0  # 0: pieces before the move; 1: after (the frame that stays)
        self.dims: tuple[int, int] = (0, 1)  # the tensor's dimensions drawn down, across
        self.cells: dict[int, QRect] = {}
        self._colors: list[QColor] = []
        self.animation = QVariantAnimation(self)
        self.animation.setStartValue(0.0)
        self.animation.setEndValue(1.0)
        self.animation.setDuration(DURATION_MS)
        self.animation.valueChanged.connect(self.set_progress)
        self._size = QSize(300, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_plan(
        self, plan: ReshardPlan | None, mesh: Mesh | None, dims: tuple[int, int] = (0, 1)
    ) -> None:
        """Show ``plan`` on ``mesh`` at its last frame, dimensions ``dims`` of the tensor
        drawn down and across."""
        self.animation.stop()
        self.plan, self.mesh, self.dims = plan, mesh, tuple(dims)
        self._colors = device_colors(min(mesh.size, 256)) if mesh is not None else []
        self.progress = 1.0
        self._relayout()
        self.update()

    def play(self) -> None:
        """Fly the moves from the first frame to the last (which then stays)."""
        if self.plan is not None:
            self.animation.stop()
            self.set_progress(0.0)
            self.animation.start()

    def set_progress(self, value: float) -> None:
        self.progress = min(1.0, max(0.0, float(value)))
        self.update()

    def sizeHint(self) -> QSize:
        return self._size

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._relayout()

    def _relayout(self) -> None:
        self.cells = {}
        mesh = self.mesh
        if mesh is None or self.plan is None:
            self._size = QSize(300, 60)
            self.setMinimumHeight(60)
            return
        rows, cols = mesh_layout(mesh.axis_sizes)
        label_h = QFontMetrics(self.font()).height() + 2
        width = max(self.width(), 300) - 8
        cell = int(max(MIN_CELL, min(MAX_CELL, (width - (cols - 1) * GAP) / max(cols, 1))))
        shape = self.plan.shape
        aspect = 1.0
        down, across = self.dims
        if len(shape) >= 2 and shape[across]:
            aspect = min(2.0, max(0.25, shape[down] / shape[across]))
        elif len(shape) == 1:
            aspect = 0.25
        cell_h = max(12, int(cell * aspect))
        for pos, device in enumerate(mesh.device_order):
            r, c = divmod(pos, cols)
            self.cells[device] = QRect(
                4 + c * (cell + GAP), 4 + r * (cell_h + label_h + GAP) + label_h, cell, cell_h
            )
        self._size = QSize(8 + cols * (cell + GAP), 8 + rows * (cell_h + label_h + GAP))
        self.setMinimumHeight(self._size.height())
        self.updateGeometry()

    def piece_rect(self, box: Box, cell: QRect) -> QRectF:
        """Where piece ``box`` of the tensor is drawn in a device's ``cell``."""
        return _mini(box, self.plan.shape if self.plan else (), QRectF(cell), self.dims)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        theme = theme_for(self)
        p.fillRect(event.rect(), theme.background)
        plan = self.plan
        if plan is None or not self.cells:
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = QFontMetrics(self.font())
        steps = {s.device: s for s in plan.steps}
        done = self.progress >= 1.0
        for device, rect in self.cells.items():
            step = steps.get(device)
            p.fillRect(rect, theme.background.darker(108))
            if step is not None:
                box = step.after if done else step.before
                if all(b > a for a, b in box) or not box:
                    p.fillRect(self.piece_rect(box, rect), HELD)
            p.setPen(QPen(theme.grid, 1))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect.adjusted(0, 0, -1, -1))
            label = str(device)
            if step is not None and step.action != "same":
                label += f" {step.action}"
            p.setPen(theme.foreground)
            p.drawText(
                QRect(rect.x(), rect.y() - fm.height() - 2, rect.width() + GAP, fm.height()),
                0,
                fm.elidedText(label, Qt.TextElideMode.ElideRight, rect.width() + GAP - 2),
            )
        moves = plan.moves[:MAX_DRAWN_MOVES]
        for move in moves:
            source, target = self.cells.get(move.source), self.cells.get(move.target)
            if source is None or target is None:
                continue
            color = QColor(self._colors[move.source % len(self._colors)])
            start = self.piece_rect(move.index, source)
            end = self.piece_rect(move.index, target)
            if done:
                _arrow(p, start.center(), end.center(), color)
                continue
            t = self.progress
            at = QRectF(
                start.x() + (end.x() - start.x()) * t,
                start.y() + (end.y() - start.y()) * t,
                start.width(),
                start.height(),
            )
            color.setAlpha(220)
            p.fillRect(at, color)
            p.setPen(QPen(theme.foreground, 1))
            p.drawRect(at)
        p.end()


def _arrow(p: QPainter, a: QPointF, b: QPointF, color: QColor) -> None:
    line = QLineF(a, b)
    if line.length() < 1:
        return
    color = QColor(color)
    color.setAlpha(200)
    p.setPen(QPen(color, 1.6))
    p.drawLine(line)
    angle = math.atan2(b.y() - a.y(), b.x() - a.x())
    head = QPolygonF(
        [
            b,
            QPointF(b.x() - 8 * math.cos(angle - 0.4), b.y() - 8 * math.sin(angle - 0.4)),
            QPointF(b.x() - 8 * math.cos(angle + 0.4), b.y() - 8 * math.sin(angle + 0.4)),
        ]
    )
    p.setBrush(color)
    p.drawPolygon(head)
