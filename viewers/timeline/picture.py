"""A picture of a whole propagation timeline, for design reviews (``render --view timeline``).

One row per top-level scope (or op, outside scopes) in the order propagation first
reached it; each step is a tick at its step number in its row, coloured by the axis it
moved. A legend counts the steps per axis; an optional ``mark`` draws a cursor at a step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen

from shardscope.viewers.common.colors import Theme, axis_color

if TYPE_CHECKING:
    from shardscope.backend.session.playback import Playback

ROW_H = 18
LEFT = 240
TOP = 64
BOTTOM = 34
MAX_ROWS = 400


def timeline_rows(playback: Playback) -> list[tuple[str, list[int]]]:
    """``(group key, step indices)`` per row, rows in order of their first step."""
    rows: dict[str, list[int]] = {}
    for index in playback.indices:
        rows.setdefault(playback.group_key(index, "op"), []).append(index)
    return list(rows.items())


def draw_timeline(
    playback: Playback,
    axis_names: tuple[str, ...],
    theme: Theme,
    *,
    width: int = 1600,
    title: str = "",
    mark: int | None = None,
) -> QImage:
    """The picture described in the module docstring, ``width`` pixels wide."""
    rows = timeline_rows(playback)
    hidden = max(0, len(rows) - MAX_ROWS)
    rows = rows[:MAX_ROWS]
    height = TOP + ROW_H * max(1, len(rows)) + BOTTOM + (ROW_H if hidden else 0)
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(theme.background)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    plot = QRectF(LEFT, TOP, width - LEFT - 20, ROW_H * max(1, len(rows)))
    painter = _TimelinePainter(p, playback, axis_names, theme, plot)
    painter.heading(title)
    painter.rows(rows, width)
    if hidden:
        p.setPen(theme.muted)
        p.drawText(QPointF(10, plot.bottom() + ROW_H - 4), f"… and {hidden} more rows")
    painter.step_axis(height - BOTTOM + 6)
    if mark is not None:
        xm = painter.x_of(mark)
        p.setPen(QPen(theme.highlight, 2))
        p.drawLine(QPointF(xm, TOP - 6), QPointF(xm, plot.bottom() + 4))
    p.end()
    return image


class _TimelinePainter:
    """Draws the parts of the timeline picture with one painter, font and step scale."""

    def __init__(
        self,
        p: QPainter,
        playback: Playback,
        axis_names: tuple[str, ...],
        theme: Theme,
        plot: QRectF,
    ) -> None:
        self.p = p
        self.playback = playback
        self.axis_names = axis_names
        self.theme = theme
        self.plot = plot
        self.font = QFont()
        self.font.setPointSizeF(9.5)
        p.setFont(self.font)
        self.fm = QFontMetricsF(self.font)
        self.last = playback.timeline.last_index
        self.span = max(1, self.last + 1)

    def x_of(self, index: float) -> float:
        """The x of step ``index``'s middle."""
        return self.plot.left() + self.plot.width() * (index + 0.5) / self.span

    def heading(self, title: str) -> None:
        """The title with the step count, then a legend: each axis's colour and steps."""
        p, theme, playback, axis_names = self.p, self.theme, self.playback, self.axis_names
        p.setPen(theme.foreground)
        bold = QFont(self.font)
        bold.setBold(True)
        p.setFont(bold)
        heading = f"{title} · " if title else ""
        heading += f"{len(playback.all_indices)} steps"
        p.drawText(QPointF(10, 20), heading)
        p.setFont(self.font)
        counts: dict[str, int] = {}
        for index in playback.indices:
            for s in playback.steps(index):
                base = s.axis.split(":(")[0]
                counts[base] = counts.get(base, 0) + 1
        x = 10.0
        for axis in sorted(counts, key=lambda a: axis_names.index(a) if a in axis_names else 99):
            color = axis_color(axis_names, axis)
            p.fillRect(QRectF(x, 32, 14, 14), color)
            label = f"{axis}: {counts[axis]} steps"
            p.setPen(theme.foreground)
            p.drawText(QPointF(x + 20, 44), label)
            x += 20 + self.fm.horizontalAdvance(label) + 24

    def rows(self, rows: list[tuple[str, list[int]]], width: int) -> None:
        """A row per key: its name, its step count and a tick per step it takes part in."""
        p, theme, fm = self.p, self.theme, self.fm
        grid = QColor(theme.grid)
        for r, (key, indices) in enumerate(rows):
            y = self.plot.top() + r * ROW_H
            if r % 2:
                shade = QColor(grid)
                shade.setAlpha(50)
                p.fillRect(QRectF(0, y, width, ROW_H), shade)
            p.setPen(theme.foreground)
            text = fm.elidedText(key, Qt.TextElideMode.ElideMiddle, LEFT - 60)
            p.drawText(QRectF(8, y, LEFT - 60, ROW_H), Qt.AlignmentFlag.AlignVCenter, text)
            p.setPen(theme.muted)
            p.drawText(
                QRectF(LEFT - 56, y, 50, ROW_H),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                str(len(indices)),
            )
            self._ticks(y, indices)

    def _ticks(self, y: float, indices: list[int]) -> None:
        tick = max(1.5, min(6.0, self.plot.width() / self.span))
        for index in indices:
            axes = sorted({s.axis.split(":(")[0] for s in self.playback.steps(index)})
            # several axes at one step share the row's height, one band each
            band = (ROW_H - 6) / len(axes)
            xi = self.x_of(index)
            for k, axis in enumerate(axes):
                self.p.setPen(QPen(axis_color(self.axis_names, axis), tick))
                y0 = y + 3 + k * band
                self.p.drawLine(QPointF(xi, y0), QPointF(xi, y0 + band))

    def step_axis(self, axis_y: float) -> None:
        """The step axis under the rows, with eleven numbered ticks."""
        p, fm, last = self.p, self.fm, self.last
        p.setPen(QPen(self.theme.muted, 1))
        p.drawLine(QPointF(self.plot.left(), axis_y), QPointF(self.plot.right(), axis_y))
        ticks = 10
        for t in range(ticks + 1):
            index = round(last * t / ticks) if last > 0 else 0
            xt = self.x_of(index)
            p.drawLine(QPointF(xt, axis_y), QPointF(xt, axis_y + 4))
            label = str(index)
            p.drawText(QPointF(xt - fm.horizontalAdvance(label) / 2, axis_y + 18), label)
        p.drawText(QPointF(10, axis_y + 18), "step")
