"""Tensor inspector: a value's facts, its spec as droppable dim slots, its tiles and texts."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QFont, QFontDatabase, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.kinds import sharding_kind
from shardscope.backend.sharding.sdy_text import sdy_sharding_text
from shardscope.backend.sharding.spec import DimSpec, Spec
from shardscope.viewers.common.colors import axis_color, theme_for
from shardscope.viewers.common.mime import axis_from_mime
from shardscope.viewers.mesh.palette import paint_chip
from shardscope.viewers.tensor.tile_grid import TileGridView

PRIORITIES = (0, 1, 2, 3)


def jax_spec_text(spec: Spec, ndim: int | None = None) -> str:
    """``P('data', None, ('x', 'y'))``, JAX's PartitionSpec repr (open dims as UNCONSTRAINED)."""
    dims = spec.padded(ndim).dims if ndim is not None else spec.dims
    parts = []
    for d in dims:
        if d.is_open and not d.axes:
            parts.append("P.UNCONSTRAINED")
        elif not d.axes:
            parts.append("None")
        elif len(d.axes) == 1:
            parts.append(repr(d.axes[0]))
        else:
            parts.append("(" + ", ".join(repr(a) for a in d.axes) + ")")
    return "P(" + ", ".join(parts) + ")"


def sharding_texts(mesh, spec: Spec, ndim: int) -> dict[str, str]:
    """The ``jax``, ``sdy``, ``hlo`` and ``kind`` texts of ``spec`` over ``mesh``."""
    kind = sharding_kind(mesh, spec, ndim)
    kind_text = kind.hlo if not kind.differs else f"{kind.hlo} (PyTorch/XLA: {kind.torch_xla})"
    return {
        "jax": jax_spec_text(spec, ndim),
        "sdy": sdy_sharding_text(mesh, spec, ndim),
        "hlo": hlo_sharding_text(mesh, spec, ndim),
        "kind": kind_text,
    }


class DimSlot(QWidget):
    """One tensor dim: its size and axis chips; accepts axis drops, offers a context menu."""

    dropped = Signal(int, object)
    menuAction = Signal(int, str, object)

    def __init__(self, dim: int, size: int | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.dim = dim
        self.size = size
        self.spec = DimSpec()
        self.mesh = None
        self._drag_over = False
        self.setAcceptDrops(True)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)
        self.setToolTip(
            f"dim {dim}: drop a mesh axis here; right-click for open/closed and priority"
        )

    def set_dim_spec(self, spec: DimSpec, mesh) -> None:
        self.spec = spec
        self.mesh = mesh
        self.updateGeometry()
        self.update()

    def _chips(self) -> list[tuple[str, str | None]]:
        if not self.spec.axes:
            return [("?" if self.spec.is_open else "replicated", None)]
        chips = [(a, a) for a in self.spec.axes]
        if self.spec.is_open:
            chips.append(("?", None))
        return chips

    def _header(self) -> str:
        size = "" if self.size is None else f" \u00b7 {self.size}"
        prio = "" if self.spec.priority is None else f" \u00b7 p{self.spec.priority}"
        return f"dim {self.dim}{size}{prio}"

    def sizeHint(self) -> QSize:
        fm = QFontMetrics(self.font())
        chips_w = sum(fm.horizontalAdvance(t) + 18 for t, _ in self._chips()) + 6 * len(
            self._chips()
        )
        width = max(fm.horizontalAdvance(self._header()) + 16, chips_w + 12, 90)
        return QSize(width, fm.height() * 2 + 22)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        theme = theme_for(self)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = QFontMetrics(self.font())
        frame = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        pen = QPen(theme.highlight if self._drag_over else theme.grid, 2 if self._drag_over else 1)
        if self.spec.is_open:
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(frame, 6, 6)
        p.setPen(theme.muted)
        p.drawText(
            QRectF(8, 3, frame.width() - 12, fm.height() + 2),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self._header(),
        )
        x = 6.0
        y = fm.height() + 8
        for text, axis in self._chips():
            w = fm.horizontalAdvance(text) + 18
            color = axis_color(self.mesh if self.mesh is not None else (), axis)
            paint_chip(
                p,
                QRectF(x, y, w, fm.height() + 6),
                text,
                color,
                dashed=axis is None,
                outline=theme.foreground,
            )
            x += w + 6
        p.end()

    def dragEnterEvent(self, event) -> None:
        ours, _ = axis_from_mime(event.mimeData())
        if ours:
            self._drag_over = True
            self.update()
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if axis_from_mime(event.mimeData())[0]:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event) -> None:
        self._drag_over = False
        self.update()

    def dropEvent(self, event) -> None:
        self._drag_over = False
        self.update()
        ours, axis = axis_from_mime(event.mimeData())
        if not ours:
            event.ignore()
            return
        event.acceptProposedAction()
        self.dropped.emit(self.dim, axis)

    def build_menu(self) -> QMenu:
        """The context menu: open/closed, priority p0..p3 or none, clear."""
        menu = QMenu(self)
        group = QActionGroup(menu)
        for label, value in (("Closed", "closed"), ("Open (?)", "open")):
            act = menu.addAction(label)
            act.setCheckable(True)
            act.setChecked(self.spec.is_open == (value == "open"))
            act.setData(f"{value}:")
            group.addAction(act)
        menu.addSeparator()
        prio_menu = menu.addMenu("Priority")
        prio_group = QActionGroup(prio_menu)
        for value in (None, *PRIORITIES):
            act = prio_menu.addAction("none" if value is None else f"p{value}")
            act.setCheckable(True)
            act.setChecked(self.spec.priority == value)
            act.setData("priority:" + ("" if value is None else str(value)))
            prio_group.addAction(act)
        menu.addSeparator()
        clear = menu.addAction("Clear (replicate)")
        clear.setData("clear:")
        # QMenu.triggered also reports actions of submenus, so one handler serves all.
        menu.triggered.connect(self._on_menu_triggered)
        return menu

    def _on_menu_triggered(self, action: QAction) -> None:
        # Never a bool as the object argument: PySide6 6.12 drops a reference to True/False
        # passed through Signal(object), which aborts the interpreter later.
        kind, _, arg = str(action.data() or "").partition(":")
        if kind == "priority":
            self.menuAction.emit(self.dim, "priority", int(arg) if arg else None)
        elif kind in ("open", "closed", "clear"):
            self.menuAction.emit(self.dim, kind, None)

    def contextMenuEvent(self, event) -> None:
        self.build_menu().exec(event.globalPos())


class TensorInspector(QWidget):
    """Shows one value under a mesh and spec; emits spec intents, never edits anything.

    ``specDropped(value_id, dim, axis)``: axis is a mesh axis name or None (replicated).
    ``specMenuAction(value_id, dim, action, arg)``: ("open", None), ("closed", None),
    ("priority", 0..3 or None), ("clear", None).
    """

    specDropped = Signal(int, int, object)
    specMenuAction = Signal(int, int, str, object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.value = None
        self.mesh = None
        self.spec: Spec | None = None
        self.texts: dict[str, str] = {}
        self.slots: list[DimSlot] = []

        self.title = QLabel("No tensor selected")
        font = QFont(self.title.font())
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts = QLabel()
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._slot_row = QHBoxLayout()
        self._slot_row.setContentsMargins(0, 0, 0, 0)
        self._slot_row.setSpacing(8)
        self._slot_row.addStretch(1)
        slot_box = QWidget()
        slot_box.setLayout(self._slot_row)

        self.tile_grid = TileGridView()

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.text_labels: dict[str, QLabel] = {}
        self.details = QWidget()
        form = QFormLayout(self.details)
        form.setContentsMargins(0, 0, 0, 0)
        for key, caption in (("jax", "JAX"), ("sdy", "Shardy"), ("hlo", "HLO"), ("kind", "kind")):
            label = QLabel()
            label.setFont(mono)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.text_labels[key] = label
            form.addRow(caption, label)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addWidget(self.title)
        layout.addWidget(self.facts)
        layout.addWidget(slot_box)
        layout.addWidget(self.tile_grid, 1)
        layout.addWidget(self.details)
        self.hint = QLabel("Select a tensor in the graph or the Program dock to see its tiles.")
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        layout.addStretch(0)
        self._show_details(False)

    def set_value(self, value, mesh, spec: Spec | None, texts: dict | None = None) -> None:
        """Show ``value`` (a graph Value) sharded by ``spec`` over ``mesh``.

        ``texts`` holds the ``jax``, ``sdy``, ``hlo`` and ``kind`` forms; when None they are
        computed here from ``mesh`` and ``spec``.
        """
        self.value, self.mesh = value, mesh
        self.spec = spec if spec is not None else Spec()
        if value is None:
            self.title.setText("No tensor selected")
            self.facts.setText("")
            self._build_slots(())
            self.texts = {}
            self._show_texts(self.texts, None)
            self._show_details(False)
            return
        self._show_details(True)
        shape = tuple(value.shape or ())
        self.title.setText(value.display_name or f"value {value.id}")
        shape_text = (
            "[" + ", ".join(str(s) for s in shape) + "]" if value.shape is not None else "n/a"
        )
        self.facts.setText(f"{value.role} \u00b7 {value.dtype}{shape_text}")
        error = None
        if texts is None and mesh is not None:
            try:
                texts = sharding_texts(mesh, self.spec, len(shape))
            except ShardscopeError as exc:
                texts, error = {}, str(exc)
        self.texts = dict(texts or {})
        self._build_slots(shape)
        padded = self.spec.dims + (DimSpec(),) * max(0, len(shape) - len(self.spec.dims))
        for slot, dim_spec in zip(self.slots, padded, strict=False):
            slot.set_dim_spec(dim_spec, mesh)
        self._show_texts(self.texts, error)
        if mesh is not None and value.shape is not None:
            self.tile_grid.set_tensor(shape, mesh, self.spec)

    def _show_details(self, shown: bool) -> None:
        # an empty tile grid draws bare axes around nothing: show a hint instead
        self.tile_grid.setVisible(shown)
        self.details.setVisible(shown)
        self.hint.setVisible(not shown)

    def slot(self, dim: int) -> DimSlot:
        """The slot of tensor dim ``dim``."""
        return self.slots[dim]

    def _build_slots(self, shape: tuple[int, ...]) -> None:
        if len(self.slots) == len(shape) and all(
            s.size == n for s, n in zip(self.slots, shape, strict=True)
        ):
            return
        for slot in self.slots:
            self._slot_row.removeWidget(slot)
            slot.deleteLater()
        self.slots = []
        for d, n in enumerate(shape):
            slot = DimSlot(d, n, self)
            slot.dropped.connect(self._on_slot_dropped)
            slot.menuAction.connect(self._on_slot_menu)
            self._slot_row.insertWidget(d, slot)
            self.slots.append(slot)

    def _show_texts(self, texts: dict, error: str | None) -> None:
        for key, label in self.text_labels.items():
            label.setText(texts.get(key, ""))
        if error:
            self.text_labels["kind"].setText(error)

    def _on_slot_dropped(self, dim: int, axis) -> None:
        if self.value is not None:
            self.specDropped.emit(int(self.value.id), dim, axis)

    def _on_slot_menu(self, dim: int, action: str, arg) -> None:
        if self.value is not None:
            self.specMenuAction.emit(int(self.value.id), dim, action, arg)
