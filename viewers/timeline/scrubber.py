"""The scrubber: every step of a timeline on one bar, grouped, with the current position.

The upper band shows the groups of consecutive steps on one top-level scope (or op),
alternately shaded and named where there is room; the lower band shows the runs of one
axis in that axis' colour. A click or drag seeks. The bands are drawn once into a pixmap
per size and grouping; moving the position repaints only the old and new cursor strips.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QWidget

from shardscope.viewers.common.colors import axis_color, theme_for

if TYPE_CHECKING:
    from shardscope.backend.session.playback import Playback, StepGroup

CURSOR_W = 3


class Scrubber(QWidget):
    """See the module docstring. ``seekRequested(position)`` on click or drag."""

    seekRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback: Playback | None = None
        self.axis_names: tuple[str, ...] = ()
        self.op_groups: list[StepGroup] = []
        self.axis_groups: list[StepGroup] = []
        self._pixmap: QPixmap | None = None
        self._cursor_x: int | None = None
        self.setMinimumHeight(38)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setToolTip("Steps grouped by scope (top) and by axis (bottom); click or drag to seek")

    def sizeHint(self) -> QSize:
        return QSize(600, 40)

    def set_playback(self, playback: Playback | None, axis_names: tuple[str, ...]) -> None:
        """Show ``playback``'s positions (call again after its filter changed)."""
        self.playback = playback
        self.axis_names = axis_names
        if playback is not None:
            self.op_groups = playback.groups("op")
            self.axis_groups = playback.groups("axis")
        else:
            self.op_groups, self.axis_groups = [], []
        self._pixmap = None
        self._cursor_x = self._x_of_position()
        self.update()

    # -- geometry -------------------------------------------------------------------------
    def _count(self) -> int:
        return len(self.playback) if self.playback is not None else 0

    def _x_of(self, position: float) -> float:
        n = self._count()
        w = max(1, self.width() - 2)
        return 1 + w * (position / n if n else 0.0)

    def _x_of_position(self) -> int | None:
        pb = self.playback
        if pb is None or pb.position is None:
            return None
        return int(self._x_of(pb.position + 0.5))

    def position_at(self, x: float) -> int:
        """The position under x (clamped)."""
        n = self._count()
        w = max(1, self.width() - 2)
        return max(0, min(n - 1, int((x - 1) / w * n)))

    def cursor_x(self) -> int | None:
        return self._cursor_x

    def position_changed(self) -> None:
        """Move the cursor: repaint only the strips it leaves and enters."""
        new = self._x_of_position()
        old = self._cursor_x
        if new == old:
            return
        self._cursor_x = new
        h = self.height()
        for x in (old, new):
            if x is not None:
                self.update(QRect(x - CURSOR_W - 1, 0, 2 * CURSOR_W + 3, h))

    # -- painting -------------------------------------------------------------------------
    def resizeEvent(self, event) -> None:
        self._pixmap = None
        self._cursor_x = self._x_of_position()
        super().resizeEvent(event)

    def _bands(self) -> QPixmap:
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap(int(self.width() * ratio), int(self.height() * ratio))
        pixmap.setDevicePixelRatio(ratio)
        theme = theme_for(self)
        pixmap.fill(theme.background)
        p = QPainter(pixmap)
        h = self.height()
        top = QRectF(0, 0, self.width(), h * 0.6)
        fm = QFontMetricsF(self.font())
        base = QColor(theme.grid)
        for i, g in enumerate(self.op_groups):
            x0, x1 = self._x_of(g.start), self._x_of(g.end + 1)
            shade = QColor(base)
            shade.setAlpha(90 if i % 2 else 170)
            r = QRectF(x0, top.top() + 1, max(1.0, x1 - x0), top.height() - 2)
            p.fillRect(r, shade)
            if r.width() > fm.horizontalAdvance(g.key) + 8:
                p.setPen(theme.foreground)
                p.drawText(r.adjusted(3, 0, -2, 0), Qt.AlignmentFlag.AlignVCenter, g.key)
        for g in self.axis_groups:
            x0, x1 = self._x_of(g.start), self._x_of(g.end + 1)
            axis = g.key.split("+")[0]
            p.fillRect(
                QRectF(x0, top.bottom() + 2, max(1.0, x1 - x0), h - top.bottom() - 3),
                axis_color(self.axis_names, axis),
            )
        p.end()
        return pixmap

    def paintEvent(self, event) -> None:
        if self._pixmap is None or self._pixmap.size() != self.size() * self.devicePixelRatioF():
            self._pixmap = self._bands()
        p = QPainter(self)
        rect = event.rect()
        ratio = self.devicePixelRatioF()
        source = QRectF(
            rect.x() * ratio, rect.y() * ratio, rect.width() * ratio, rect.height() * ratio
        )
        p.drawPixmap(QRectF(rect), self._pixmap, source)
        theme = theme_for(self)
        if self._cursor_x is not None:
            p.setPen(QPen(theme.highlight, CURSOR_W))
            p.drawLine(self._cursor_x, 0, self._cursor_x, self.height())
        if self.hasFocus():
            p.setPen(QPen(theme.highlight, 1, Qt.PenStyle.DotLine))
            p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        if not self._count():
            p.setPen(theme.muted)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no steps")

    # -- mouse ----------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._count():
            self.setFocus()
            self.seekRequested.emit(self.position_at(event.position().x()))
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if not self._count():
            return
        position = self.position_at(event.position().x())
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.seekRequested.emit(position)
            event.accept()
            return
        self.setToolTip(self.describe(position))
        super().mouseMoveEvent(event)

    def describe(self, position: int) -> str:
        """What the scrubber holds at ``position``: the step, its group and axes."""
        pb = self.playback
        index = pb.indices[position]
        group = pb.group_key(index, "op")
        return f"step {index} · {group} · {pb.group_key(index, 'axis')}\nclick or drag to seek"
