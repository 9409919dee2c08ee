"""Tile grid: which device holds which block of a tensor, drawn at shard granularity.

The widget picks the two displayed dims and the tile of every other dim, builds a
uint8 image with one pixel per tile of the displayed dims, mapped onto the tensor's
element coordinates (padded extent, so every tile block has the tile's length and XLA's
padding shows as a hatched band past the real edge), and reports the hovered tile.
Pixel values index a 256-colour device LUT with fixed levels, so redraws stay on
pyqtgraph's fast path. How the image, lines, padding and labels are drawn lives in
``tile_layers``. The plot is as large as the tensor's aspect asks (``plot_size``), within
a box of one height for every tensor, on the dock's own background: another tensor
changes the tiles and axes, not what lies around them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.tile_text import (
    describe_tile,
    slice_label,
    tile_label,
    tile_map_summary,
)
from shardscope.backend.sharding.tiles import TileMap
from shardscope.viewers.common.colors import LUT_SIZE, lut_for, text_color_on, theme_for
from shardscope.viewers.common.damage import DiffedView
from shardscope.viewers.common.layouts import column_layout
from shardscope.viewers.tensor.plot_size import (
    MAX_HEIGHT,
    MAX_WIDTH,
    PlotBox,
    plot_margins,
    tiles_area,
)
from shardscope.viewers.tensor.tile_layers import Cell, TileLayers

MAX_LABELLED_TILES = 4096
# Ctrl+wheel zooms the grid between this many times closer than the whole tensor and a
# little past all of it (the plain wheel scrolls the dock that holds the grid)
MAX_ZOOM_IN = 64.0
ZOOM_OUT_MARGIN = 1.5
WIDEST_DIM = "dim 0 (65536)"
WIDEST_TICK = "65536"
# the summary, on its own line under the pickers, keeps room for this text at any width
# (a narrow dock wraps it to two lines), so that most tensors' summaries move nothing
SUMMARY_ROOM = "8 tiles \u00b7 each on 2 devices \u00b7 uneven: dim 0 pads 2"


class _GridPlot(pg.PlotWidget):
    """A plot that asks for little: the grid sizes it to its tensor."""

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(240, 180)


class TileGridView(QWidget):
    """The tiles of a tensor under a mesh and spec, coloured by the device holding them.

    ``set_tensor(shape, mesh, spec)`` redraws; hovering a tile emits ``tileHovered`` with
    its devices (once per change of tile; ``[]`` when leaving the tiles).
    """

    tileHovered = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.tile_map: TileMap | None = None
        self.error: str | None = None
        self._shape: tuple[int, ...] = ()
        self._mesh: Mesh | None = None
        self._spec: Spec | None = None
        self._tiles: dict[tuple[int, ...], tuple[tuple[tuple[int, int], ...], tuple[int, ...]]] = {}
        self._row_dim: int | None = None
        self._col_dim: int | None = None
        self._fixed: dict[int, int] = {}
        self._hover_key: tuple[int, ...] | None = None
        self._fitted_extent: tuple[float, float] | None = None
        self._highlight: set[int] = set()
        self._image = np.zeros((1, 1), dtype=np.uint8)
        self._keys = np.zeros((1, 1), dtype=object)

        top = self._build_pickers()
        self._build_sliders()
        self._build_plot()
        self._build_labels()
        layout = column_layout(
            self, [top, self.summary, self._slider_box, self.plot_box, self.status], spacing=4
        )
        # room to spare goes below: the plot keeps the size its tensor asks for
        layout.addStretch(1)
        self._apply_theme()
        self._set_status_idle()

    def _build_pickers(self) -> QHBoxLayout:
        """The row and column dim pickers, in one row."""
        self.row_combo = QComboBox()
        self.col_combo = QComboBox()
        for combo in (self.row_combo, self.col_combo):
            # one width for every tensor (WIDEST_DIM fits): a box that fits its items
            # resizes a moment after they change, and the whole row is laid out and
            # repainted again
            combo.addItem(WIDEST_DIM)
            combo.setFixedWidth(combo.sizeHint().width())
            combo.clear()
        self.row_combo.setToolTip("Tensor dimension drawn down the rows")
        self.col_combo.setToolTip("Tensor dimension drawn across the columns")
        self.row_combo.activated.connect(self._on_row_dim_change)
        self.col_combo.activated.connect(self._on_col_dim_change)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("rows"))
        top.addWidget(self.row_combo)
        top.addWidget(QLabel("cols"))
        top.addWidget(self.col_combo)
        top.addStretch(1)
        return top

    def _build_sliders(self) -> None:
        """The box of sliders that pick the tile of each dim not drawn."""
        self._slider_box = QWidget()
        self._slider_layout = QGridLayout(self._slider_box)
        self._slider_layout.setContentsMargins(0, 0, 0, 0)
        self.sliders: dict[int, QSlider] = {}
        self._slider_labels: dict[int, QLabel] = {}
        # one slider's row tall even without one: the plot below stays where it is
        # (instead of moving, so repainting all of it) between tensors of rank 2 and 3
        self._slider_box.setMinimumHeight(
            max(
                QSlider(Qt.Orientation.Horizontal).sizeHint().height(),
                QLabel("0").sizeHint().height(),
            )
        )

    def _build_plot(self) -> None:
        """The plot the tiles are drawn in, its axes as wide and tall for every tensor."""
        self.plot = _GridPlot()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=True, y=True)
        self.plot.invertY(True)
        self.view_box = self.plot.getPlotItem().getViewBox()
        self.layers = TileLayers(self.plot)
        # the left axis as wide for every tensor (numbers up to WIDEST_TICK and its
        # label): an axis that fits its numbers narrows or widens a paint after the
        # tensor changes, moving (and repainting) the whole plot once more
        left = self.plot.getPlotItem().getAxis("left")
        metrics = self.plot.fontMetrics()
        left.setWidth(
            metrics.horizontalAdvance(WIDEST_TICK)
            + left.style["tickTextOffset"][0]
            + max(0, left.style["tickLength"])
            + metrics.height()
            + 6
        )
        # and the bottom axis as tall, numbers and label, with a tensor or none: an axis
        # without them is thinner, and the first tensor would move the whole plot
        bottom = self.plot.getPlotItem().getAxis("bottom")
        bottom.setLabel(WIDEST_DIM)
        bottom.setHeight(
            math.ceil(
                metrics.height()
                + bottom.style["tickTextOffset"][1]
                + max(0, bottom.style["tickLength"])
                + bottom.label.boundingRect().height() * 0.8
            )
        )
        bottom.setLabel("")
        self._plot_margins = plot_margins(self.plot)
        self._caps = (MAX_WIDTH, MAX_HEIGHT)
        self.plot_box = PlotBox(self.plot, MAX_HEIGHT + self._plot_margins[1])
        self.plot_box.installEventFilter(self)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.plot.viewport().installEventFilter(self)
        # a refit to another tensor's size redraws the whole plot in Qt's eyes, though
        # often only the axes' numbers differ on screen
        self.damage = DiffedView(self.plot)

    def _build_labels(self) -> None:
        """The summary over the plot, the hint inside the empty plot, the status under it."""
        self.summary = QLabel()
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)
        self.summary.setMinimumHeight(self.summary.fontMetrics().lineSpacing())
        self._summary_probe = QLabel(SUMMARY_ROOM)
        self._summary_probe.setWordWrap(True)
        self.summary.installEventFilter(self)
        # shown inside the empty plot at its top, where the tiles will be drawn: the
        # first tensor then changes what any later one changes, and little else
        self.hint = QLabel(self.plot.viewport())
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter)
        self.hint.setContentsMargins(12, 12, 12, 12)
        self.hint.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hint.setAutoFillBackground(True)
        self.hint.hide()
        self.status = QLabel("")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.setWordWrap(True)
        # a line tall when empty too, so the plot above keeps its height
        self.status.setMinimumHeight(self.status.fontMetrics().lineSpacing())

    # ------------------------------------------------------------------ setters

    def set_tensor(self, shape: Sequence[int] | None, mesh: Mesh, spec: Spec) -> None:
        """Show the tiles of a ``shape`` tensor sharded by ``spec`` over ``mesh``."""
        shape = tuple(int(s) for s in shape) if shape is not None else ()
        if (shape, mesh, spec) == (self._shape, self._mesh, self._spec) and (
            self.tile_map is not None or self.error is not None
        ):
            return
        same_layout = (
            shape == self._shape
            and self.tile_map is not None
            and [d.shards for d in self.tile_map.dims] == self._shards_of(shape, mesh, spec)
        )
        self._shape, self._mesh, self._spec = shape, mesh, spec
        self.error = None
        self.hint.hide()
        try:
            self.tile_map = TileMap.build(mesh, spec, shape)
        except ShardscopeError as exc:
            self.tile_map = None
            self.error = str(exc)
        if self.tile_map is None:
            self._tiles = {}
            self._clear_drawing()
            self.summary.setText("")
            self.status.setText(self.error or "")
            return
        self._tiles = {key: (rng, devs) for key, rng, devs in self.tile_map.tiles()}
        rank = len(shape)
        if not same_layout or self._row_dim is None and self._col_dim is None:
            self._choose_default_dims(rank)
        self._fixed = {
            d: min(self._fixed.get(d, 0), self.tile_map.dims[d].shards - 1)
            for d in range(rank)
            if d not in (self._row_dim, self._col_dim)
        }
        self._rebuild_controls()
        self._redraw(refit=True)

    def show_empty(self, hint: str) -> None:
        """No tensor: the plot drawn empty, in its usual colours, with ``hint`` inside it."""
        self.tile_map, self.error = None, None
        self._shape, self._mesh, self._spec = (), None, None
        self._tiles, self._fixed = {}, {}
        self._row_dim, self._col_dim = None, None
        self._rebuild_controls()
        self._clear_drawing()
        self.summary.setText("")
        self.status.setText("")
        pi = self.plot.getPlotItem()
        for name in ("bottom", "left"):
            pi.setLabel(name, "")
            pi.getAxis(name).setTicks([[]])
        self.hint.setText(hint)
        self._fit_plot()
        self._place_hint()
        self.hint.show()
        self.plot.scene().prepareForPaint()

    def _place_hint(self) -> None:
        self.hint.setGeometry(self.plot.viewport().rect())

    def set_largest_plot(self, width: int, height: int) -> None:
        """Let the tensor's aspect make the tiles' area up to ``width`` x ``height``
        pixels (a picture of the tiles alone, as ``render`` draws it)."""
        self._caps = (width, height)
        self.plot_box.setFixedHeight(height + self._plot_margins[1])
        self._fit_plot()

    def _fit_plot(self) -> None:
        """Size the plot to its tensor (its whole box when there is none)."""
        room = self.plot_box.width(), self.plot_box.height()
        margin_w, margin_h = self._plot_margins
        if self.tile_map is None:
            size = QSize(*room)
        else:
            rows, cols, tr, tc, _, _ = self._grid_shape()
            area = tiles_area(
                (room[0] - margin_w, room[1] - margin_h),
                rows * tr / max(cols * tc, 1e-9),
                (rows, cols),
                self._label_size(),
                self._caps,
            )
            size = QSize(area[0] + margin_w, area[1] + margin_h)
        if self.plot.size() != size:
            self.plot.setFixedSize(size)
            self._place_hint()

    def _label_size(self) -> tuple[int, int] | None:
        """(width, height) of the widest tile label drawn, None where none is."""
        labels = self.layers.labels
        texts = labels.texts
        if not texts:
            return None
        metrics = QFontMetrics(labels.font)
        return max(metrics.horizontalAdvance(t) for t in texts) + 4, metrics.height()

    def set_display_dims(self, row_dim: int | None, col_dim: int) -> None:
        """Draw tensor dim ``row_dim`` down the rows and ``col_dim`` across."""
        rank = len(self._shape)
        if not (0 <= col_dim < rank) or (row_dim is not None and not 0 <= row_dim < rank):
            raise ValueError(f"display dims ({row_dim}, {col_dim}) out of range for rank {rank}")
        if row_dim == col_dim:
            row_dim, col_dim = self._col_dim, self._row_dim
            if col_dim is None:
                return
        self._row_dim, self._col_dim = row_dim, col_dim
        self._fixed = {d: self._fixed.get(d, 0) for d in range(rank) if d not in (row_dim, col_dim)}
        self._rebuild_controls()
        self._redraw(refit=True)

    def set_slice(self, dim: int, tile_index: int) -> None:
        """Show tile ``tile_index`` of a dim that is not displayed."""
        slider = self.sliders[dim]
        slider.setValue(int(tile_index))

    def highlight_devices(self, devices: list[int]) -> None:
        """Outline the tiles held by any of ``devices``."""
        new = {int(d) for d in devices}
        if new == self._highlight:
            return
        self._highlight = new
        self._draw_highlight()

    # ------------------------------------------------------------------ queries

    @property
    def display_dims(self) -> tuple[int | None, int | None]:
        """(rows dim, cols dim) currently drawn."""
        return self._row_dim, self._col_dim

    def image_data(self) -> np.ndarray:
        """The uint8 image (one pixel per displayed tile; values index the device LUT)."""
        return self._image

    def tile_at(self, row: int, col: int) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
        """(ranges, devices) of the displayed tile at grid position (row, col)."""
        return self._tiles[self._keys[row, col]]

    def hover_view_point(self, x: float, y: float) -> None:
        """Act as if the mouse were at view coordinates (x = col element, y = row element)."""
        self._on_mouse_moved(self.view_box.mapViewToScene(QPointF(x, y)))

    # ------------------------------------------------------------------ internals

    @staticmethod
    def _shards_of(shape: tuple[int, ...], mesh: Mesh, spec: Spec) -> list[int] | None:
        try:
            return [d.shards for d in TileMap.build(mesh, spec, shape).dims]
        except ShardscopeError:
            return None

    def _choose_default_dims(self, rank: int) -> None:
        if rank == 0:
            self._row_dim, self._col_dim = None, None
            return
        if rank == 1:
            self._row_dim, self._col_dim = None, 0
            return
        # Prefer the two most-split dims so the grid shows as much of the sharding as it can.
        shards = [d.shards for d in self.tile_map.dims]
        order = sorted(range(rank), key=lambda d: (-shards[d], d))
        a, b = sorted(order[:2])
        self._row_dim, self._col_dim = a, b

    def _rebuild_controls(self) -> None:
        rank = len(self._shape)
        names = [f"dim {d} ({n})" for d, n in enumerate(self._shape)]
        for combo, current in ((self.row_combo, self._row_dim), (self.col_combo, self._col_dim)):
            combo.blockSignals(True)
            if [combo.itemText(i) for i in range(combo.count())] != names:
                combo.clear()
                combo.addItems(names)
            if current is not None:
                combo.setCurrentIndex(current)
            combo.setEnabled(rank >= 2)
            combo.blockSignals(False)
        while self._slider_layout.count():
            item = self._slider_layout.takeAt(0)
            if item.widget() is not None:
                # gone now, not when the loop gets to deleteLater (a later relayout would
                # repaint the grid again)
                item.widget().hide()
                item.widget().setParent(None)
                item.widget().deleteLater()
        self.sliders = {}
        self._slider_labels = {}
        for row, d in enumerate(sorted(self._fixed)):
            shards = self.tile_map.dims[d].shards
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(0, shards - 1)
            slider.setValue(self._fixed[d])
            slider.setPageStep(1)
            slider.setEnabled(shards > 1)
            slider.valueChanged.connect(lambda v, dim=d: self._on_slice_change(dim, v))
            label = QLabel()
            self._slider_layout.addWidget(label, row, 0)
            self._slider_layout.addWidget(slider, row, 1)
            if self._slider_box.isVisible():
                label.show()
                slider.show()
            self.sliders[d] = slider
            self._slider_labels[d] = label
            self._update_slider_label(d)

    def _update_slider_label(self, d: int) -> None:
        self._slider_labels[d].setText(slice_label(d, self.tile_map.dims[d], self._fixed[d]))

    def _on_row_dim_change(self, index: int) -> None:
        if index != self._row_dim and self._col_dim is not None:
            self.set_display_dims(index, self._col_dim if index != self._col_dim else self._row_dim)

    def _on_col_dim_change(self, index: int) -> None:
        if index != self._col_dim:
            row = self._row_dim if index != self._row_dim else self._col_dim
            self.set_display_dims(row, index)

    def _on_slice_change(self, dim: int, value: int) -> None:
        if self._fixed.get(dim) == value:
            return
        self._fixed[dim] = value
        self._update_slider_label(dim)
        self._redraw(refit=False)

    def _grid_shape(self) -> tuple[int, int, float, float, int, int]:
        """(rows, cols, row tile length, col tile length, row size, col size)."""
        dims = self.tile_map.dims
        if self._row_dim is None:
            rows, tr, nr = 1, 1.0, 1
        else:
            info = dims[self._row_dim]
            rows, tr, nr = info.shards, float(max(info.tile, 1)), info.size
        if self._col_dim is None:
            cols, tc, nc = 1, 1.0, 1
        else:
            info = dims[self._col_dim]
            cols, tc, nc = info.shards, float(max(info.tile, 1)), info.size
        return rows, cols, tr, tc, nr, nc

    def _redraw(self, refit: bool) -> None:
        if self.tile_map is None:
            return
        rank = len(self._shape)
        geometry = self._grid_shape()
        rows, cols, tr, tc, _, _ = geometry
        image = np.zeros((rows, cols), dtype=np.uint8)
        keys = np.empty((rows, cols), dtype=object)
        n_dev = len(self.tile_map.device_ids)
        lut = lut_for(n_dev)
        label_cells: list[Cell] = []
        show_labels = rows * cols <= MAX_LABELLED_TILES
        for i in range(rows):
            for j in range(cols):
                key = [0] * rank
                for d, k in self._fixed.items():
                    key[d] = k
                if self._row_dim is not None:
                    key[self._row_dim] = i
                if self._col_dim is not None:
                    key[self._col_dim] = j
                k = tuple(key)
                keys[i, j] = k
                _, devs = self._tiles[k]
                idx = devs[0] % LUT_SIZE
                image[i, j] = idx
                if show_labels:
                    cell = QRectF(j * tc, i * tr, tc, tr)
                    bg = QColor(*(int(v) for v in lut[idx]))
                    label_cells.append((cell, tile_label(devs), text_color_on(bg)))
        self._image = np.ascontiguousarray(image)
        self._keys = keys
        full = self.layers.draw(geometry, self._image, lut, label_cells, theme_for(self))

        self._update_summary()
        self._draw_highlight()
        self._hover_key = None
        self.layers.clear_hover()
        if refit:
            self._fit_plot()
            extent = (full.width(), full.height())
            if extent != self._fitted_extent:
                self._set_zoom_limits(full)
                self.view_box.setRange(rect=full, padding=0.02)
                self.view_box.disableAutoRange()
                self._fitted_extent = extent
        # pyqtgraph moves the axes to a new range when it next paints; do it now, so that
        # what is drawn off screen to find the changed pixels is what the screen will show
        self.plot.scene().prepareForPaint()

    def _set_zoom_limits(self, full: QRectF) -> None:
        """Ctrl+wheel zooms between MAX_ZOOM_IN times closer than the whole tensor and
        ZOOM_OUT_MARGIN times all of it, and pans no further than that margin."""
        w, h = max(full.width(), 1e-9), max(full.height(), 1e-9)
        m = ZOOM_OUT_MARGIN
        self.view_box.setLimits(
            xMin=full.center().x() - w * m / 2,
            xMax=full.center().x() + w * m / 2,
            yMin=full.center().y() - h * m / 2,
            yMax=full.center().y() + h * m / 2,
            minXRange=w / MAX_ZOOM_IN,
            maxXRange=w * m,
            minYRange=h / MAX_ZOOM_IN,
            maxYRange=h * m,
        )

    def zoom_factor(self) -> float:
        """How many times closer than the whole tensor the grid is shown (1: all of it)."""
        if self._fitted_extent is None:
            return 1.0
        shown = self.view_box.viewRange()[0]
        return self._fitted_extent[0] / max(shown[1] - shown[0], 1e-12)

    def _update_summary(self) -> None:
        self.summary.setText(tile_map_summary(self.tile_map))
        self.plot.getPlotItem().setLabel(
            "bottom",
            f"dim {self._col_dim} ({self._shape[self._col_dim]})"
            if self._col_dim is not None
            else "",
        )
        self.plot.getPlotItem().setLabel(
            "left",
            f"dim {self._row_dim} ({self._shape[self._row_dim]})"
            if self._row_dim is not None
            else "",
        )
        self._set_ticks()

    def _set_ticks(self) -> None:
        pi = self.plot.getPlotItem()
        for axis_name, dim in (("bottom", self._col_dim), ("left", self._row_dim)):
            axis = pi.getAxis(axis_name)
            if dim is None:
                axis.setTicks([[]])
                continue
            info = self.tile_map.dims[dim]
            step = max(1, math.ceil(info.shards / 8))
            # Tick every shown tile boundary inside the tensor, plus its real end (the padding edge).
            ticks = [
                (k * info.tile, str(k * info.tile))
                for k in range(0, info.shards + 1, step)
                if k == 0 or info.size - k * info.tile >= info.tile / 2
            ]
            ticks.append((info.size, str(info.size)))
            axis.setTicks([ticks])

    def _clear_drawing(self) -> None:
        self._image = np.zeros((1, 1), dtype=np.uint8)
        self._keys = np.zeros((1, 1), dtype=object)
        self.layers.clear()
        self._hover_key = None

    def _draw_highlight(self) -> None:
        rects = []
        if self._highlight and self.tile_map is not None:
            rows, cols, tr, tc, _, _ = self._grid_shape()
            for i in range(rows):
                for j in range(cols):
                    _, devs = self._tiles[self._keys[i, j]]
                    if self._highlight.intersection(devs):
                        rects.append(QRectF(j * tc, i * tr, tc, tr))
        self.layers.show_highlight(rects, theme_for(self))

    def _set_status_idle(self) -> None:
        if self.tile_map is None and self.error is None:
            self.status.setText("")
            return
        self.status.setText(self.error or "Hover a tile to see its devices and index ranges.")

    def _on_mouse_moved(self, scene_pos) -> None:
        if self.tile_map is None:
            return
        p = self.view_box.mapSceneToView(scene_pos)
        rows, cols, tr, tc, _, _ = self._grid_shape()
        i, j = math.floor(p.y() / tr), math.floor(p.x() / tc)
        inside = self.view_box.sceneBoundingRect().contains(scene_pos)
        key = self._keys[i, j] if inside and 0 <= i < rows and 0 <= j < cols else None
        if key == self._hover_key:
            return
        self._hover_key = key
        if key is None:
            self._set_status_idle()
            self.plot.setToolTip("")
            self.layers.clear_hover()
            self.tileHovered.emit([])
            return
        ranges, devs = self._tiles[key]
        text = describe_tile(key, ranges, devs)
        self.status.setText(text)
        self.plot.setToolTip(text.replace(" \u00b7 ", "\n"))
        self.layers.show_hover(QRectF(j * tc, i * tr, tc, tr), theme_for(self))
        self.tileHovered.emit(list(devs))

    def eventFilter(self, obj, event) -> bool:
        if (
            event.type() == QEvent.Type.Wheel
            and not event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            # the plain wheel is the dock's: the scroll area holding the grid scrolls;
            # Ctrl+wheel zooms the grid
            area = self._holding_scroll_area()
            if area is not None:
                QApplication.sendEvent(area.viewport(), event)
            else:
                event.ignore()
            return True
        if event.type() == QEvent.Type.Resize and obj is self.plot.viewport():
            self._place_hint()
        if event.type() == QEvent.Type.Resize and obj is self.plot_box:
            self._fit_plot()
        if event.type() == QEvent.Type.Resize and obj is self.summary:
            self._keep_summary_room()
        if event.type() == QEvent.Type.Leave and self._hover_key is not None:
            self._hover_key = None
            self.layers.clear_hover()
            self._set_status_idle()
            self.tileHovered.emit([])
        return super().eventFilter(obj, event)

    def _keep_summary_room(self) -> None:
        # measured by a label like the summary, so that it wraps the text the same way
        room = self._summary_probe.heightForWidth(self.summary.width())
        line = self.summary.fontMetrics().lineSpacing()
        self.summary.setMinimumHeight(max(line, room))

    def _holding_scroll_area(self) -> QAbstractScrollArea | None:
        widget = self.parentWidget()
        while widget is not None and not isinstance(widget, QAbstractScrollArea):
            widget = widget.parentWidget()
        return widget

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_theme()
            self._redraw(refit=False)
        super().changeEvent(event)

    def _apply_theme(self) -> None:
        theme = theme_for(self)
        # the dock's own colour: where the plot grows or shrinks, nothing changes colour
        self.plot.setBackground(self.palette().window().color())
        pi = self.plot.getPlotItem()
        for name in ("left", "bottom"):
            axis = pi.getAxis(name)
            axis.setPen(theme.grid)
            axis.setTextPen(theme.foreground)
        palette = self.hint.palette()
        palette.setColor(self.hint.foregroundRole(), theme.foreground)
        # opaque in the plot's colour: the empty plot's axis lines never run through it
        palette.setColor(self.hint.backgroundRole(), self.plot.backgroundBrush().color())
        self.hint.setPalette(palette)
