"""Tensor inspector: a value's facts, its spec as droppable dim slots, its tiles and texts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import DimSpec, Spec
from shardscope.backend.sharding.text_forms import sharding_texts
from shardscope.viewers.common.damage import quiet_change, settle_layouts
from shardscope.viewers.common.flow_layout import FlowLayout
from shardscope.viewers.common.value_text import facts_text
from shardscope.viewers.tensor.dim_slot import DimSlot
from shardscope.viewers.tensor.tile_grid import TileGridView

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Value

# the texts that wrap to a second line for some tensors of a program and not others
TWO_LINES = ("sdy", "hlo")
# The rows only a torch_xla program's texts fill.
TORCH_ROWS = ("torch_xla", "dtensor", "sharded_by")
EMPTY_HINT = "Select a tensor in the graph or the Program dock to see its tiles."
NO_MESH_HINT = "No mesh to lay this tensor's tiles out on."
NO_SHAPE_HINT = "This value's shape is unknown, so it has no tiles to show."
# what a text row shows while no tensor is
NO_TEXT = "\u2014"


class TensorInspector(QWidget):
    """Shows one value under a mesh and spec; emits spec intents, never edits anything.

    ``specDropped(value_id, dim, axis)``: axis is a mesh axis name or None (replicated),
    in place of the dim's axes; ``axisAppended(value_id, dim, axis)``: dropped with Shift
    or Ctrl held, after them.
    ``specMenuAction(value_id, dim, action, arg)``: ("open", None), ("closed", None),
    ("priority", 0..3 or None), ("clear", None). ``dimSelected(value_id, dim)``: a click
    on a dimension.
    """

    specDropped = Signal(int, int, object)
    axisAppended = Signal(int, int, str)
    specMenuAction = Signal(int, int, str, object)
    dimSelected = Signal(int, int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.value: Value | None = None
        self.mesh: Mesh | None = None
        self.spec: Spec | None = None
        self.tiles_spec: Spec | None = None
        self.texts: dict[str, str] = {}
        # Whether the program is a torch_xla one: its texts then include the
        # ``xs.mark_sharding`` call (``text_forms.mark_sharding_text``) and DTensor's
        # placements (``text_forms.dtensor_placements_text``).
        self.torch_xla = False
        # How the script sharded each argument, by name (``Program.sharded_by``): shown
        # as the "sharded by" row of that argument.
        self.sharded_by: dict[str, str] = {}
        self.slots: list[DimSlot] = []
        self._shown: tuple | None = None
        self._make_heading()
        slot_box = self._make_slot_row()
        self.tile_grid = TileGridView()
        self._make_details()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addWidget(slot_box)
        layout.addWidget(self.tile_grid)
        layout.addWidget(self.details)
        layout.addStretch(0)
        # No tensor: the same widgets in the same places, the grid empty with a hint in
        # it, so that the first selection changes only what any later one changes.
        self.hint = self.tile_grid.hint
        self._show(None, None, Spec(), Spec(), None)

    def _make_heading(self) -> None:
        """The tensor's name in large bold type, and a line of facts under it."""
        self.title = QLabel("No tensor selected")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts = QLabel()
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _make_slot_row(self) -> QWidget:
        """The row of dimension slots, a chip's height tall from the start."""
        # wraps, so that rank-4 and wider specs never push the dock's contents off its edge
        self._slot_row = FlowLayout(spacing=8)
        slot_box = QWidget()
        slot_box.setLayout(self._slot_row)
        # a chip's row tall before any tensor: the first one's chips then move nothing
        probe = DimSlot(0, None)
        slot_box.setMinimumHeight(probe.sizeHint().height())
        probe.deleteLater()
        return slot_box

    def _make_details(self) -> None:
        """The spec's texts in each form (JAX, PyTorch/XLA, DTensor, Shardy, HLO) and its
        kind."""
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.text_labels: dict[str, QLabel] = {}
        self.details = QWidget()
        # A grid, not a QFormLayout: when a text's wrapping changed, the form shared the
        # rows' heights out unevenly and a wrapped HLO text ran into the "kind" row.
        form = QGridLayout(self.details)
        form.setContentsMargins(0, 0, 0, 0)
        form.setColumnStretch(1, 1)
        rows = (
            ("jax", "JAX"),
            ("torch_xla", "PyTorch/XLA"),
            ("dtensor", "DTensor"),
            ("sdy", "Shardy"),
            ("hlo", "HLO"),
            ("kind", "kind"),
            ("sharded_by", "sharded by"),
        )
        self.text_captions: dict[str, QLabel] = {}
        for row, (key, caption) in enumerate(rows):
            label = QLabel()
            label.setFont(mono)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if key in TWO_LINES:
                # room for a second line from the start: a text that wraps to two lines
                # then leaves the tile grid above where it was, instead of shrinking it
                # and moving every row below (all repainted on the next selection)
                label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
                label.setMinimumHeight(2 * QFontMetrics(mono).lineSpacing())
            self.text_labels[key] = label
            self.text_captions[key] = QLabel(caption)
            form.addWidget(self.text_captions[key], row, 0, Qt.AlignmentFlag.AlignTop)
            form.addWidget(label, row, 1)

    def set_value(
        self,
        value: Value | None,
        mesh: Mesh | None,
        spec: Spec | None,
        texts: dict[str, str] | None = None,
        *,
        tiles: Spec | None = None,
    ) -> None:
        """Show ``value`` (a graph Value) sharded by ``spec`` over ``mesh``.

        ``spec`` fills the dimension chips (what the user asked for); ``tiles``, when
        given, is the layout the tiles and texts show (what the compiler decided), else
        ``spec``. ``texts`` holds the ``jax``, ``sdy``, ``hlo`` and ``kind`` forms (and
        ``torch_xla`` and ``dtensor`` for a torch_xla program); when None they are computed here from
        ``mesh`` and the tiles' spec.
        """
        spec = spec if spec is not None else Spec()
        tiles = tiles if tiles is not None else spec
        shown = (mesh, spec, tiles, texts)
        if value is self.value and shown == self._shown:
            return  # nothing to redraw: over a forwarded display even a no-op repaint costs
        self._shown = shown
        # a selection changes a few texts and chips: repaint those pixels, not the dock
        # (nor the scroll bar of a scroll area holding the inspector, whose range moves)
        with quiet_change(self._quiet_root()):
            self._show(value, mesh, spec, tiles, texts)
            settle_layouts(self)
        self.tile_grid.damage.sync()

    def _quiet_root(self) -> QWidget:
        """The scroll area showing the inspector, if one does, else the inspector."""
        viewport = self.parentWidget()
        area = viewport.parentWidget() if viewport is not None else None
        if isinstance(area, QScrollArea) and area.widget() is self:
            return area
        return self

    def _show(
        self,
        value: Value | None,
        mesh: Mesh | None,
        spec: Spec,
        tiles: Spec,
        texts: dict[str, str] | None,
    ) -> None:
        self.value, self.mesh = value, mesh
        self.spec = spec
        self.tiles_spec = tiles
        if value is None:
            self.title.setText("No tensor selected")
            self.facts.setText("")
            self._build_slots(())
            self.texts = {}
            self._show_texts({k: NO_TEXT for k in self.text_labels if k not in TORCH_ROWS}, None)
            self.tile_grid.show_empty(EMPTY_HINT)
            return
        shape = tuple(value.shape or ())
        self.title.setText(value.display_name or f"value {value.id}")
        self.facts.setText(facts_text(value))
        error = None
        if texts is None and mesh is not None:
            try:
                texts = sharding_texts(mesh, self.tiles_spec, len(shape), torch_xla=self.torch_xla)
            except ShardscopeError as exc:
                texts, error = {}, str(exc)
        self.texts = dict(texts or {})
        origin = self.sharded_by.get(value.name or "")
        if origin:
            self.texts["sharded_by"] = origin
        self._build_slots(shape)
        padded = self.spec.dims + (DimSpec(),) * max(0, len(shape) - len(self.spec.dims))
        for slot, dim_spec in zip(self.slots, padded, strict=False):
            slot.set_dim_spec(dim_spec, mesh)
        self._show_texts(self.texts, error)
        if mesh is None:
            self.tile_grid.show_empty(NO_MESH_HINT)
        elif value.shape is None:
            self.tile_grid.show_empty(NO_SHAPE_HINT)
        else:
            self.tile_grid.set_tensor(shape, mesh, self.tiles_spec)

    def slot(self, dim: int) -> DimSlot:
        """The slot of tensor dim ``dim``."""
        return self.slots[dim]

    def _build_slots(self, shape: tuple[int, ...]) -> None:
        # the chips of the dims both tensors have stay where they are, only their sizes
        # change; the rest are taken away or added at the end
        for slot, n in zip(self.slots, shape, strict=False):
            slot.set_size(n)
        for slot in self.slots[len(shape) :]:
            self._slot_row.removeWidget(slot)
            # deleteLater alone leaves the old chip drawn until the event loop gets to it
            slot.hide()
            slot.setParent(None)
            slot.deleteLater()
        del self.slots[len(shape) :]
        for d in range(len(self.slots), len(shape)):
            n = shape[d]
            slot = DimSlot(d, n, self)
            slot.dropped.connect(self._on_slot_dropped)
            slot.appended.connect(self._on_slot_appended)
            slot.menuAction.connect(self._on_slot_menu)
            slot.clicked.connect(self._on_slot_clicked)
            self._slot_row.insertWidget(d, slot)
            # now, not when the layout's queued show gets to it: the layout counts only
            # shown widgets, and a later show would lay the dock out (and repaint it) again
            slot.show()
            self.slots.append(slot)

    def _show_texts(self, texts: dict, error: str | None) -> None:
        for key, label in self.text_labels.items():
            label.setText(texts.get(key, ""))
        # Only a torch_xla program has these rows: the others keep their four.
        for key in TORCH_ROWS:
            self.text_labels[key].setVisible(key in texts)
            self.text_captions[key].setVisible(key in texts)
        if error:
            self.text_labels["kind"].setText(error)

    def _on_slot_dropped(self, dim: int, axis) -> None:
        if self.value is not None:
            self.specDropped.emit(int(self.value.id), dim, axis)

    def _on_slot_appended(self, dim: int, axis: str) -> None:
        if self.value is not None:
            self.axisAppended.emit(int(self.value.id), dim, axis)

    def _on_slot_clicked(self, dim: int) -> None:
        if self.value is not None:
            self.dimSelected.emit(int(self.value.id), dim)

    def _on_slot_menu(self, dim: int, action: str, arg) -> None:
        if self.value is not None:
            self.specMenuAction.emit(int(self.value.id), dim, action, arg)
