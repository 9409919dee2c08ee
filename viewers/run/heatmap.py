"""Per-device heat maps of one run tensor, laid out like the mesh.

One picture per device at the device's mesh position (2-D meshes as their grid, more axes
with the leading ones flattened into rows, a mesh of one row wrapped where that draws the
pictures largest in the room the view has),
each drawing that device's shard values (``RunResult`` carries them; large shards come as
block means, ``backend.run.shards``) on one colour scale shared by every device, with a
legend of the scale's minimum and maximum. Each picture is labelled with its device id and
index ranges (and, for a run on several hosts, its host: ``h1 · 5 [0:8]``). Devices that should hold the same piece but hold different bytes get a red
outline, and a line below says which devices disagree and by how much. ``set_groups``
outlines the device groups of a compiled collective, each group in its own colour (the
mesh editor's colours), with a legend line naming each group.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from shardscope.backend.run.shards import MAX_SIDE, heat_grid
from shardscope.viewers.common.colors import theme_for
from shardscope.viewers.mesh.device_grid import GROUP_COLORS

if TYPE_CHECKING:
    from shardscope.backend.run.result import Shard, TensorRun

WRAP = 8
MAX_TILE = 320
MIN_TILE = 36
GAP = 10
STRIP = 16
MISMATCH = QColor("#D64545")
NAN = QColor("#9E9E9E")
# Viridis at five stops: dark blue for the minimum, yellow for the maximum.
RAMP = ((0.0, "#440154"), (0.25, "#3B528B"), (0.5, "#21918C"), (0.75, "#5EC962"), (1.0, "#FDE725"))
_RAMP_RGB = np.array([QColor(c).getRgb()[:3] for _, c in RAMP], dtype=np.float64)
_RAMP_AT = np.array([t for t, _ in RAMP])


def index_text(index: tuple[tuple[int, int], ...]) -> str:
    """``[0:2, 0:16]``: a shard's [start, stop) per dimension."""
    return "[" + ", ".join(f"{a}:{b}" for a, b in index) + "]"


def colors_of(grid: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """RGB (uint8, shape + (3,)) of each value on the scale ``lo``..``hi``; NaN is grey."""
    span = hi - lo
    t = np.zeros_like(grid) if span <= 0 else (grid - lo) / span
    t = np.clip(np.nan_to_num(t, nan=0.0), 0.0, 1.0)
    rgb = np.stack([np.interp(t, _RAMP_AT, _RAMP_RGB[:, k]) for k in range(3)], axis=-1)
    rgb[np.isnan(grid)] = NAN.getRgb()[:3]
    return np.rint(rgb).astype(np.uint8)


def color_of(value: float, lo: float, hi: float) -> QColor:
    """The colour one value gets on the scale ``lo``..``hi``."""
    r, g, b = colors_of(np.array([[value]], dtype=np.float64), lo, hi)[0, 0]
    return QColor(int(r), int(g), int(b))


def mesh_layout(sizes: tuple[int, ...]) -> tuple[int, int]:
    """Rows and columns of devices: the last two axes of the mesh, leading ones flattened
    into rows; a 1-D mesh wrapped every ``WRAP``."""
    if not sizes:
        return 1, 1
    if len(sizes) == 1:
        return math.ceil(sizes[0] / WRAP), min(sizes[0], WRAP)
    return math.prod(sizes[:-1]), sizes[-1]


def mismatch_lines(tensor: TensorRun) -> list[str]:
    """One line per group of devices that should hold the same piece but do not: which
    devices, the piece, and the largest difference between their values."""
    by_device = {s.device: s for s in tensor.shards}
    out = []
    for group in tensor.replica_mismatches:
        shards = [by_device[d] for d in group if d in by_device]
        if not shards:
            continue
        where = index_text(shards[0].index)
        devices = ", ".join(str(d) for d in group)
        diff = _largest_difference(shards)
        how = (
            f"max |difference| {diff:.3g}"
            if diff is not None
            else "their bytes differ (no values came back to compare)"
        )
        out.append(f"Devices {devices} should hold the same piece {where} but differ: {how}")
    return out


def _largest_difference(shards: list[Shard]) -> float | None:
    if any(s.values is None for s in shards):
        return None
    arrays = [np.array([np.nan if v is None else v for v in s.values]) for s in shards]
    if any(a.shape != arrays[0].shape for a in arrays):
        return None
    first = arrays[0]
    worst = 0.0
    for a in arrays[1:]:
        if (np.isnan(a) != np.isnan(first)).any():
            return float("inf")
        worst = max(worst, float(np.nanmax(np.abs(a - first), initial=0.0)))
    return worst


class HeatmapView(QWidget):
    """See the module docstring. ``set_tensor`` shows one tensor of a run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tensor: TensorRun | None = None
        self.mesh_sizes: tuple[int, ...] = ()
        self.device_order: list[int] = []
        self.tiles: dict[int, np.ndarray] = {}  # device -> the 2-D grid its picture draws
        self.scale: tuple[float, float] | None = None
        self.flagged: set[int] = set()
        self.lines: list[str] = []  # notes and mismatches, below the pictures
        self._images: dict[int, QImage] = {}
        self._rects: dict[int, QRect] = {}
        self.pixel = 1  # pixels a side per value
        self.row_px = 1  # pixels down per row of values (a 1-D strip is taller)
        self._size = QSize(300, 120)
        self._group_of: dict[int, int] = {}  # device id -> index of its outlined group
        self.show_hosts = False  # labels name each device's host
        self.group_title = ""  # what the groups are, e.g. ``all-reduce``
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_groups(self, groups: list[tuple[int, ...]], title: str = "") -> None:
        """Outline each group of device ids in its own colour; ``title`` (e.g. the
        collective's kind) heads the legend. An empty list removes the outlines."""
        group_of = {int(d): i for i, group in enumerate(groups) for d in group}
        if group_of == self._group_of and title == self.group_title:
            return
        self._group_of, self.group_title = group_of, title
        self._relayout()
        self.update()

    @property
    def groups(self) -> list[tuple[int, ...]]:
        """The outlined groups, in the order given to ``set_groups``."""
        out: dict[int, list[int]] = {}
        for device, i in self._group_of.items():
            out.setdefault(i, []).append(device)
        return [tuple(out[i]) for i in sorted(out)]

    @staticmethod
    def group_color(index: int) -> QColor:
        """The colour of group ``index``'s outline (as on the mesh editor's grid)."""
        return QColor(GROUP_COLORS[index % len(GROUP_COLORS)])

    def group_of(self, device: int) -> int | None:
        """The index of the outlined group ``device`` is in, or None."""
        return self._group_of.get(device)

    def legend_text(self) -> str:
        """The groups' legend line ("" without groups)."""
        groups = self.groups
        if not groups:
            return ""
        parts = " ".join(f"g{i} {{{','.join(map(str, g))}}}" for i, g in enumerate(groups))
        what = f"{self.group_title} device groups" if self.group_title else "Device groups"
        return f"Outlined: {what}: {parts}"

    def set_tensor(
        self,
        tensor: TensorRun | None,
        mesh_sizes: tuple[int, ...] = (),
        device_order: list[int] | None = None,
        *,
        hosts: bool = False,
    ) -> None:
        """Draw ``tensor``'s shards on a mesh of ``mesh_sizes`` whose row-major positions
        hold ``device_order`` (default 0, 1, 2, ...); None clears the view. ``hosts``:
        each label names its device's host (``Shard.host``)."""
        self.tensor = tensor
        self.show_hosts = bool(hosts)
        self.mesh_sizes = tuple(mesh_sizes)
        n = math.prod(self.mesh_sizes) if self.mesh_sizes else 0
        self.device_order = list(device_order or range(n))
        self.tiles, self._images = {}, {}
        self.flagged, self.lines, self.scale = set(), [], None
        if tensor is not None:
            self._build(tensor)
        self._relayout()
        self.update()

    def _build(self, tensor: TensorRun) -> None:
        for s in tensor.shards:
            # A tile all padding (past an uneven dimension's end) has no values to draw.
            if s.values is not None and s.values_shape is not None and math.prod(s.values_shape):
                self.tiles[s.device] = heat_grid(s.values, s.values_shape)
        finite = [g[np.isfinite(g)] for g in self.tiles.values()]
        finite = [f for f in finite if f.size]
        if finite:
            lo = float(min(f.min() for f in finite))
            hi = float(max(f.max() for f in finite))
            self.scale = (lo, hi)
            for device, grid in self.tiles.items():
                rgb = np.ascontiguousarray(colors_of(grid, lo, hi))
                h, w = grid.shape
                image = QImage(rgb.data, w, h, 3 * w, QImage.Format.Format_RGB888)
                self._images[device] = image.copy()  # the copy owns its pixels
        self.flagged = {d for group in tensor.replica_mismatches for d in group}
        if not tensor.shards:
            self.lines.append("No shards came back for this tensor.")
        elif not self.tiles:
            self.lines.append(
                "No values came back for this tensor (the run's value budget was spent)."
            )
        pooled = [
            s
            for s in tensor.shards
            if s.device in self.tiles and self.tiles[s.device].size < math.prod(s.shape)
        ]
        if pooled:
            s = pooled[0]
            shown = "x".join(map(str, self.tiles[s.device].shape))
            self.lines.append(
                f"Shards of {list(s.shape)} drawn as {shown} block means "
                f"(at most {MAX_SIDE} values a side; the worker sends large shards averaged)."
            )
        if len(tensor.shape) > 2:
            self.lines.append(
                f"{len(tensor.shape)}-D shards drawn with their leading dimensions flattened "
                "into rows."
            )
        self.lines.extend(mismatch_lines(tensor))

    # -- layout ---------------------------------------------------------------------------
    def sizeHint(self) -> QSize:
        return self._size

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize() != event.size():
            self._relayout()

    def _header_h(self) -> int:
        lines = 3 if self._group_of else 2
        return lines * (QFontMetrics(self.font()).height() + 6)

    def _relayout(self) -> None:
        self._rects = {}
        fm = QFontMetrics(self.font())
        label_h = fm.height() + 2
        top = self._header_h() + 4
        if self.tensor is None or not self.mesh_sizes:
            self._size = QSize(300, top)
            self.setMinimumHeight(top)
            self.updateGeometry()
            return
        grid_h = max((g.shape[0] for g in self.tiles.values()), default=1)
        grid_w = max((g.shape[1] for g in self.tiles.values()), default=1)
        text_h = len(self.lines) * (fm.height() + 2) + 4
        parent = self.parentWidget()
        avail_h = parent.height() if parent is not None else self.height()
        labels = [self._label(device) for device in self.device_order]
        label_w = max(MIN_TILE, *(fm.horizontalAdvance(t) for t in labels))
        room = (max(self.width(), 300) - 8, avail_h - top - text_h, label_h)
        rows, cols = max(
            self._arrangements(label_w, room[0]),
            key=lambda rc: (self._pixel_for(rc, room, (grid_h, grid_w)), rc[1]),
        )
        self.pixel = self._pixel_for((rows, cols), room, (grid_h, grid_w))
        tile_w = max(grid_w * self.pixel, label_w)
        # A 1-D shard is a strip: taller than its values are wide.
        self.row_px = self.pixel if grid_h > 1 else max(self.pixel, STRIP)
        tile_h = max(grid_h * self.row_px, 8)
        step_x, step_y = tile_w + GAP, tile_h + label_h + GAP
        for pos, device in enumerate(self.device_order):
            r, c = divmod(pos, cols)
            self._rects[device] = QRect(4 + c * step_x, top + r * step_y, tile_w, tile_h)
        height = top + rows * step_y + text_h
        self._size = QSize(8 + cols * step_x, height)
        self.setMinimumHeight(height)
        self.updateGeometry()

    def _arrangements(self, label_w: int, width: int) -> list[tuple[int, int]]:
        """The rows and columns the pictures may take: the mesh's own grid, and for a
        mesh of one row (a 1-D mesh) that row wrapped every 1 to n devices, as long as
        their labels fit the width."""
        rows, cols = mesh_layout(self.mesh_sizes)
        n = len(self.device_order)
        if rows * cols != n or (len(self.mesh_sizes) > 1 and math.prod(self.mesh_sizes[:-1]) > 1):
            return [(rows, cols)]
        fits = [c for c in range(1, n + 1) if c * (label_w + GAP) - GAP <= width]
        return [(math.ceil(n / c), c) for c in fits] or [(n, 1)]

    @staticmethod
    def _pixel_for(
        arrangement: tuple[int, int], room: tuple[int, int, int], grid: tuple[int, int]
    ) -> int:
        """Pixels a side per value for ``arrangement`` (rows, columns of pictures) in
        ``room`` (width, height for the pictures, a label's height) of ``grid`` (rows,
        columns of values): whole pixels, the same on every device so that equal values
        look equal; as many as fit the width and the height (the dock is short)."""
        rows, cols = arrangement
        width, height, label_h = room
        grid_h, grid_w = grid
        tile = int(max(MIN_TILE, min(MAX_TILE, (width - (cols - 1) * GAP) / max(cols, 1))))
        fit_h = height // max(rows, 1) - label_h - GAP
        # a 1-D shard is drawn as a strip at least STRIP pixels tall
        by_height = fit_h // grid_h if height > 0 and grid_h > 1 else tile
        if grid_h == 1 and height > 0 and fit_h < STRIP:
            by_height = 0
        smallest = 2 if max(grid_w, grid_h) <= 32 else 1
        return max(smallest, min(tile // max(grid_w, grid_h), by_height))

    def tile_rect(self, device: int) -> QRect:
        """Where device ``device``'s picture is drawn."""
        return self._rects[device]

    def group_rect(self, device: int) -> QRect:
        """The outline drawn around device ``device``'s picture and label when it is in
        an outlined group."""
        rect = self._rects[device]
        label_h = QFontMetrics(self.font()).height() + 2
        return rect.adjusted(-4, -4, 4, label_h + 4)

    def image_rect(self, device: int) -> QRect:
        """The part of ``tile_rect`` the device's values fill (``pixel`` pixels a value)."""
        rect = self._rects[device]
        grid = self.tiles.get(device)
        if grid is None:
            return rect
        h, w = grid.shape
        return QRect(rect.x(), rect.y(), w * self.pixel, h * self.row_px)

    def value_at(self, device: int, row: int, col: int) -> QRect:
        """The square of the picture that draws value (row, col) of device's grid."""
        rect = self.image_rect(device)
        return QRect(
            rect.x() + col * self.pixel, rect.y() + row * self.row_px, self.pixel, self.row_px
        )

    # -- painting -------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        theme = theme_for(self)
        p.fillRect(event.rect(), theme.background)
        tensor = self.tensor
        if tensor is None:
            p.setPen(theme.muted)
            text = "Choose an output or argument to see each device's values."
            if self._group_of:
                what = f"the {self.group_title}'s" if self.group_title else "the"
                text += f" {what.capitalize()} device groups are outlined on them."
            p.drawText(
                self.rect().adjusted(6, 6, -6, -6),
                Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap,
                text,
            )
            p.end()
            return
        fm = QFontMetrics(self.font())
        line_h = fm.height() + 6
        p.setPen(theme.foreground)
        spec = f" [{tensor.spec}]" if tensor.spec else ""
        p.drawText(
            QRect(4, 2, self.width() - 8, line_h),
            Qt.AlignmentFlag.AlignVCenter,
            f"{tensor.label}: {tensor.dtype}{list(tensor.shape)}{spec}, one picture per device",
        )
        self._paint_legend(p, QRect(4, 2 + line_h, self.width() - 8, line_h - 4), theme)
        self._paint_group_legend(p, QRect(4, 2 + 2 * line_h, self.width() - 8, line_h - 4), theme)
        for device, rect in self._rects.items():
            self._paint_tile(p, device, rect, fm, theme)
        y = max((r.bottom() for r in self._rects.values()), default=self._header_h())
        y += fm.height() + GAP
        for line in self.lines:
            p.setPen(MISMATCH if line.startswith("Devices ") else theme.muted)
            p.drawText(QRect(4, y, self.width() - 8, fm.height() + 2), 0, line)
            y += fm.height() + 2
        p.end()

    def _paint_legend(self, p: QPainter, rect: QRect, theme) -> None:
        if self.scale is None:
            return
        lo, hi = self.scale
        fm = QFontMetrics(self.font())
        lo_text, hi_text = f"min {lo:.4g}", f"max {hi:.4g}"
        x = rect.x()
        p.setPen(theme.foreground)
        p.drawText(QRect(x, rect.y(), fm.horizontalAdvance(lo_text) + 4, rect.height()), 0, lo_text)
        x += fm.horizontalAdvance(lo_text) + 8
        bar = QRect(x, rect.y() + 2, min(200, max(60, rect.width() // 4)), rect.height() - 4)
        gradient = QLinearGradient(bar.left(), 0, bar.right(), 0)
        for t, color in RAMP:
            gradient.setColorAt(t, QColor(color))
        p.fillRect(bar, gradient)
        p.setPen(QPen(theme.grid, 1))
        p.drawRect(bar.adjusted(0, 0, -1, -1))
        p.setPen(theme.foreground)
        p.drawText(
            QRect(bar.right() + 8, rect.y(), fm.horizontalAdvance(hi_text) + 4, rect.height()),
            0,
            hi_text,
        )

    def _paint_group_legend(self, p: QPainter, rect: QRect, theme) -> None:
        """``Outlined: all-reduce device groups:`` then ``g0 {0,1}`` ... each in its colour."""
        groups = self.groups
        if not groups:
            return
        fm = QFontMetrics(self.font())
        what = f"{self.group_title} device groups" if self.group_title else "Device groups"
        head = f"Outlined: {what}:"
        p.setPen(theme.foreground)
        p.drawText(QRect(rect.x(), rect.y(), rect.width(), rect.height()), 0, head)
        x = rect.x() + fm.horizontalAdvance(head) + 8
        for i, group in enumerate(groups):
            text = f"g{i} {{{','.join(map(str, group))}}}"
            width = fm.horizontalAdvance(text) + 8
            if x + width > rect.right():
                p.setPen(theme.muted)
                p.drawText(QRect(x, rect.y(), rect.right() - x, rect.height()), 0, "…")
                return
            box = QRect(x, rect.y(), width, rect.height())
            p.setPen(QPen(self.group_color(i), 2))
            p.drawRect(box.adjusted(0, 0, -1, -1))
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
            x += width + 6

    def _label(self, device: int) -> str:
        shard = next((s for s in self.tensor.shards if s.device == device), None)
        text = f"{device} {index_text(shard.index)}" if shard is not None else f"{device}"
        if self.show_hosts and shard is not None:
            text = f"h{shard.host} · {text}"
        group = self._group_of.get(device)
        return f"g{group} · {text}" if group is not None else text

    def _paint_tile(self, p: QPainter, device: int, rect: QRect, fm, theme) -> None:
        image = self._images.get(device)
        inner = self.image_rect(device)
        if image is not None:
            p.drawImage(inner, image)
        else:
            p.fillRect(rect, NAN)
        p.setPen(QPen(theme.grid, 1))
        p.drawRect(inner.adjusted(0, 0, -1, -1))
        if device in self.flagged:
            p.setPen(QPen(MISMATCH, 3))
            p.drawRect(inner.adjusted(-2, -2, 1, 1))
        group = self._group_of.get(device)
        if group is not None:
            # Around the picture and its label, outside the mismatch outline.
            p.setPen(QPen(self.group_color(group), 3))
            p.drawRect(self.group_rect(device))
        label = fm.elidedText(self._label(device), Qt.TextElideMode.ElideRight, rect.width() + 4)
        if group is not None:
            p.setPen(self.group_color(group))
        else:
            p.setPen(MISMATCH if device in self.flagged else theme.foreground)
        p.drawText(QRect(rect.x(), rect.bottom() + 2, rect.width() + GAP, fm.height()), 0, label)
