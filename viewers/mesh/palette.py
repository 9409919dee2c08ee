"""A palette of draggable chips: one per mesh axis, plus "replicated", wrapped onto more
rows when the dock is too narrow for them in one (never drawn over each other)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QDrag, QFontMetrics, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QApplication, QLabel, QSizePolicy, QWidget

from shardscope.backend.session.document import Session
from shardscope.backend.sharding.mesh import Mesh
from shardscope.viewers.common.colors import REPLICATED, axis_color, text_color_on, theme_for
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.flow_layout import FlowLayout
from shardscope.viewers.common.mime import axis_mime_data


class AxisChip(QWidget):
    """A rounded chip in an axis colour; dragging it carries the axis as AXIS_MIME."""

    def __init__(self, axis: str | None, label: str, color: QColor, parent: QWidget | None = None):
        super().__init__(parent)
        self.axis = axis
        self.label = label
        self.color = QColor(color)
        self._press: QPoint | None = None
        self.setCursor(Qt.CursorShape.OpenHandCursor)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        what = "replicated (clears a dim)" if axis is None else f"mesh axis {axis}"
        tip = f"Drag {what} onto a tensor dimension"
        if axis is not None:
            tip += ": it replaces the dimension's axes; hold Shift or Ctrl as you drop to append it"
        self.setToolTip(tip)
        self.setAccessibleName(label)

    def sizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        return QSize(fm.horizontalAdvance(self.label) + 20, fm.height() + 10)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        paint_chip(
            p,
            QRectF(self.rect()).adjusted(1, 1, -1, -1),
            self.label,
            self.color,
            dashed=self.axis is None,
            outline=theme_for(self).foreground,
        )
        p.end()

    def mime_data(self):
        """The drag payload of this chip."""
        return axis_mime_data(self.axis)

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        self._press = None
        super().mouseReleaseEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._press is None or not (event.buttons() & Qt.MouseButton.LeftButton):
            return
        if (
            event.position().toPoint() - self._press
        ).manhattanLength() < QApplication.startDragDistance():
            return
        self._press = None
        drag = QDrag(self)
        drag.setMimeData(self.mime_data())
        pixmap = QPixmap(self.size() * self.devicePixelRatioF())
        pixmap.setDevicePixelRatio(self.devicePixelRatioF())
        pixmap.fill(Qt.GlobalColor.transparent)
        self.render(pixmap)
        drag.setPixmap(pixmap)
        drag.setHotSpot(event.position().toPoint())
        drag.exec(Qt.DropAction.CopyAction)


def paint_chip(
    p: QPainter,
    rect: QRectF,
    label: str,
    color: QColor,
    *,
    dashed: bool = False,
    outline: QColor | None = None,
) -> None:
    """Draw one chip: filled rounded rect with contrasting text (dashed edge for replicated)."""
    radius = min(rect.height() / 2, 8)
    p.setBrush(color)
    if dashed and outline is not None:
        pen = QPen(outline, 1.2, Qt.PenStyle.DashLine)
    else:
        pen = QPen(color.darker(130), 1)
    p.setPen(pen)
    p.drawRoundedRect(rect, radius, radius)
    p.setPen(text_color_on(color))
    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)


def axis_label(name: str, size: int) -> str:
    """Chip text for an axis: ``data ×4``."""
    return f"{name} \u00d7{size}"


class SpecPalette(QWidget):
    """Chips for the current mesh's axes; drag one onto a tensor dim to shard it."""

    def __init__(self, parent: QWidget | None = None, *, session: Session | None = None):
        """``session``: show its mesh's axes as it changes."""
        super().__init__(parent)
        self._mesh: Mesh | None = None
        self._links = Connections()
        if session is not None:
            self._links.connect(session.events.mesh, self.set_mesh)
        self._layout = FlowLayout(self, spacing=8)
        self._layout.setContentsMargins(6, 4, 6, 4)
        self._title = QLabel("Axes:")
        self._layout.addWidget(self._title)
        self.chips: list[AxisChip] = []

    def detach(self) -> None:
        """Stop following the session."""
        self._links.close()

    def set_mesh(self, mesh: Mesh | None) -> None:
        """Show one chip per axis of ``mesh`` (None shows only "replicated")."""
        if mesh is self._mesh:
            return
        self._mesh = mesh
        for chip in self.chips:
            self._layout.removeWidget(chip)
            chip.hide()  # gone from sight now, not when the event loop deletes it
            chip.deleteLater()
        self.chips = []
        axes = list(mesh.axes) if mesh is not None else []
        for a in axes:
            self.chips.append(
                AxisChip(a.name, axis_label(a.name, a.size), axis_color(mesh, a.name), self)
            )
        self.chips.append(AxisChip(None, REPLICATED, axis_color(mesh or (), None), self))
        for i, chip in enumerate(self.chips):
            self._layout.insertWidget(1 + i, chip)
        self.updateGeometry()

    def chip(self, axis: str | None) -> AxisChip:
        """The chip of ``axis`` (None: the replicated chip)."""
        for c in self.chips:
            if c.axis == axis:
                return c
        raise KeyError(axis)
