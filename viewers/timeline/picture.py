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
    font = QFont()
    font.setPointSizeF(9.5)
    p.setFont(font)
    fm = QFontMetricsF(font)
    last = playback.timeline.last_index
    span = max(1, last + 1)
    plot = QRectF(LEFT, TOP, width - LEFT - 20, ROW_H * max(1, len(rows)))

    def x_of(index: float) -> float:
        return plot.left() + plot.width() * (index + 0.5) / span

    # title and legend
    p.setPen(theme.foreground)
    bold = QFont(font)
    bold.setBold(True)
    p.setFont(bold)
    heading = f"{title} · " if title else ""
    heading += f"{len(playback.all_indices)} steps"
    p.drawText(QPointF(10, 20), heading)
    p.setFont(font)
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
        x += 20 + fm.horizontalAdvance(label) + 24
    # rows
    grid = QColor(theme.grid)
    for r, (key, indices) in enumerate(rows):
        y = plot.top() + r * ROW_H
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
        tick = max(1.5, min(6.0, plot.width() / span))
        for index in indices:
            axes = sorted({s.axis.split(":(")[0] for s in playback.steps(index)})
            # several axes at one step share the row's height, one band each
            band = (ROW_H - 6) / len(axes)
            xi = x_of(index)
            for k, axis in enumerate(axes):
                p.setPen(QPen(axis_color(axis_names, axis), tick))
                y0 = y + 3 + k * band
                p.drawLine(QPointF(xi, y0), QPointF(xi, y0 + band))
    if hidden:
        p.setPen(theme.muted)
        p.drawText(QPointF(10, plot.bottom() + ROW_H - 4), f"… and {hidden} more rows")
    # step axis
    p.setPen(QPen(theme.muted, 1))
    axis_y = height - BOTTOM + 6
    p.drawLine(QPointF(plot.left(), axis_y), QPointF(plot.right(), axis_y))
    ticks = 10
    for t in range(ticks + 1):
        index = round(last * t / ticks) if last > 0 else 0
        xt = x_of(index)
        p.drawLine(QPointF(xt, axis_y), QPointF(xt, axis_y + 4))
        label = str(index)
        p.drawText(QPointF(xt - fm.horizontalAdvance(label) / 2, axis_y + 18), label)
    p.drawText(QPointF(10, axis_y + 18), "step")
    if mark is not None:
        xm = x_of(mark)
        p.setPen(QPen(theme.highlight, 2))
        p.drawLine(QPointF(xm, TOP - 6), QPointF(xm, plot.bottom() + 4))
    p.end()
    return image
