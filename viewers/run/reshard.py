"""The reshard view: one tensor moved from one sharding to another, as ``jax.device_put``
moves it (``backend.run.reshard``).

Two editable choices name the shardings (from / to: the spec the run placed the tensor
with, the one the session gives it, replicated, or any spec typed in). The picture is the
mesh, one cell per device, each cell a miniature of the whole tensor with the piece the
device holds filled in; the parts that travel fly from their sending device's cell to
the receiving one's (``ReshardPicture.play``), and the last frame, which stays, shows the
new pieces with an arrow per move. A miniature draws two dimensions of the tensor (down
and across); for a tensor of more than two a choice says which two, the sharded ones
first. A line says whether the move is free (the layout does
not change), local (each device slices what it holds) or real traffic, with bytes. "Run it
for real" asks (``runRequested``) for ``jax.device_put`` on real devices; ``show_check``
says whether every device ended with the planned slice holding the right values. On a
mesh of more than ``SYNC_DEVICES`` devices the plan is made through ``plan_async``
(``plan_async(fn, on_done, on_failed)`` runs ``fn`` elsewhere) where one is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, QSize, Qt, QVariantAnimation, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.reshard import plan_reshard
from shardscope.backend.sharding.spec import parse_spec
from shardscope.backend.units import bytes_text
from shardscope.viewers.common.colors import device_colors, theme_for
from shardscope.viewers.run.heatmap import index_text, mesh_layout

if TYPE_CHECKING:
    from shardscope.backend.run.reshard import Box, ReshardPlan
    from shardscope.backend.sharding.mesh import Mesh

# Planning is quick up to here (0.3 s for 256 devices); larger meshes plan through
# ``plan_async`` (off the GUI thread) when one is given.
SYNC_DEVICES = 256
MAX_CELL = 120
MIN_CELL = 40
GAP = 18
MAX_DRAWN_MOVES = 512
DURATION_MS = 1600
HELD = QColor("#5B8FD6")
FAILED = QColor("#D64545")
PASSED = QColor("#2E7D32")


def kind_text(plan: ReshardPlan) -> str:
    """One line: free, local slices or traffic, with bytes."""
    if plan.kind == "free":
        return "Free: the layout is the same, every device keeps its piece; nothing moves."
    if plan.kind == "local":
        return (
            "Local slice: every device cuts its new piece from what it holds; "
            "0 bytes cross between devices."
        )
    n = len(plan.moves)
    return (
        f"Traffic: {bytes_text(plan.bytes)} ({plan.bytes} bytes) move between devices in "
        f"{n} transfer{'s' if n != 1 else ''}."
    )


def check_text(plan: ReshardPlan, devices: dict[int, dict]) -> tuple[bool, str]:
    """Whether a real ``device_put`` (``check_reshard``'s answer) matched ``plan``, and a
    line saying so."""
    want = {s.device: tuple(tuple(r) for r in s.after) for s in plan.steps}
    wrong_index = [
        d for d, got in devices.items() if tuple(tuple(r) for r in got["index"]) != want.get(d)
    ]
    wrong_data = [d for d, got in devices.items() if not got["data_ok"]]
    missing = sorted(set(want) - set(devices))
    if not (wrong_index or wrong_data or missing):
        return True, (
            f"Checked with jax.device_put on {len(devices)} devices: every device holds its "
            "planned slice with the right values."
        )
    parts = []
    if wrong_index:
        parts.append(f"devices {_ids(wrong_index)} hold another slice than planned")
    if wrong_data:
        parts.append(f"devices {_ids(wrong_data)} hold wrong values")
    if missing:
        parts.append(f"devices {_ids(missing)} hold nothing")
    return False, "jax.device_put disagrees: " + "; ".join(parts) + "."


def _ids(devices) -> str:
    return ", ".join(str(d) for d in sorted(devices))


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


def dim_pairs(rank: int) -> list[tuple[int, int]]:
    """The pairs of dimensions a miniature of a rank-``rank`` tensor can draw."""
    return [(a, b) for a in range(rank) for b in range(a + 1, rank)]


def default_dims(rank: int, specs: list[str]) -> tuple[int, int]:
    """The two dimensions to draw: those the ``specs`` (spec texts) shard, in order,
    then the first others."""
    if rank < 2:
        return (0, 1)
    sharded: list[int] = []
    for text in specs:
        try:
            spec = parse_spec(text or "_").padded(rank)
        except ShardscopeError:
            continue
        for i, dim in enumerate(spec.dims[:rank]):
            if dim.axes and i not in sharded:
                sharded.append(i)
    chosen = sharded[:2] + [i for i in range(rank) if i not in sharded]
    a, b = sorted(chosen[:2])
    return (a, b)


def dims_text(dims: tuple[int, int], shape: tuple[int, ...]) -> str:
    """``dim 0 (8) down, dim 2 (16) across``."""
    down, across = dims
    return f"dim {down} ({shape[down]}) down, dim {across} ({shape[across]}) across"


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


class ReshardView(QWidget):
    """See the module docstring. ``set_tensor`` chooses the tensor and the shardings on
    offer; ``runRequested`` asks for the real ``device_put`` of the shown plan."""

    runRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = ""
        self.shape: tuple[int, ...] = ()
        self.dtype = "float32"
        self.itemsize = 4
        self.mesh: Mesh | None = None
        self.plan: ReshardPlan | None = None
        self.plan_async: Callable[..., None] | None = None
        self._asked = 0  # plans asked for; an answer to an older one is dropped
        self._shown: tuple[str, str] | None = None  # the choices last planned
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.source = self._choice()
        self.target = self._choice()
        self.show_button = QPushButton("Show the move", self)
        self.show_button.clicked.connect(lambda: self.refresh(again=True))
        self.run_button = QPushButton("Run it for real", self)
        self.run_button.setToolTip(
            "jax.device_put the tensor from one sharding to the other on as many CPU devices "
            "as the mesh has, in a worker process, and check each device's slice"
        )
        self.run_button.clicked.connect(self._on_run)
        self.kind = QLabel(self)
        self.kind.setWordWrap(True)
        self.check = QLabel(self)
        self.check.setWordWrap(True)
        # Which two dimensions of a tensor of more than two the miniatures draw.
        self.dims_label = QLabel("Drawn", self)
        self.dims_choice = QComboBox(self)
        self.dims_choice.setToolTip(
            "The two dimensions of the tensor each device's miniature draws"
        )
        self.dims_choice.activated.connect(self._on_dims)
        self._pairs: list[tuple[int, int]] = []  # the dims' choices, in order
        self.picture = ReshardPicture(self)
        form = QGridLayout()
        form.addWidget(QLabel("From", self), 0, 0)
        form.addWidget(self.source, 0, 1)
        form.addWidget(QLabel("To", self), 1, 0)
        form.addWidget(self.target, 1, 1)
        form.addWidget(self.show_button, 0, 2)
        form.addWidget(self.run_button, 1, 2)
        form.addWidget(self.dims_label, 2, 0)
        form.addWidget(self.dims_choice, 2, 1)
        form.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(self.kind)
        layout.addWidget(self.check)
        layout.addWidget(self.picture, 1)
        self.set_tensor(None)

    def _choice(self) -> QComboBox:
        box = QComboBox(self)
        box.setEditable(True)
        box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        box.activated.connect(lambda _i: self.refresh())
        box.lineEdit().returnPressed.connect(self.refresh)
        return box

    def set_tensor(
        self,
        name: str | None,
        shape: tuple[int, ...] = (),
        dtype: str = "float32",
        itemsize: int = 4,
        mesh: Mesh | None = None,
        choices: list[tuple[str, str]] | None = None,
        source: int = 0,
        target: int = 0,
    ) -> None:
        """Offer ``choices`` (label, spec text) for ``name`` of ``shape`` on ``mesh``, with
        ``source`` and ``target`` chosen; None: nothing chosen."""
        self.name, self.shape, self.dtype, self.itemsize, self.mesh = (
            name or "",
            tuple(shape),
            dtype,
            itemsize,
            mesh,
        )
        enabled = name is not None and mesh is not None
        for box, index in ((self.source, source), (self.target, target)):
            box.clear()
            for label, spec in choices or []:
                box.addItem(f"{spec}   ({label})" if label else spec, spec)
            if box.count():
                box.setCurrentIndex(min(index, box.count() - 1))
            box.setEnabled(enabled)
        self.show_button.setEnabled(enabled)
        self._fill_dims(
            default_dims(
                len(self.shape), [self.spec_text(self.source), self.spec_text(self.target)]
            )
        )
        self.title.setText(
            f"Reshard {name}: {dtype}{list(shape)} from one sharding to another (jax.device_put)."
            if enabled
            else "Choose an output or argument to see how it moves between shardings."
        )
        self.check.setText("")
        self._shown = None
        self.refresh()

    def _fill_dims(self, chosen: tuple[int, int]) -> None:
        """Offer the pairs of dimensions of a tensor of more than two, ``chosen`` chosen;
        hidden for fewer."""
        self.dims_choice.clear()
        rank = len(self.shape)
        self._pairs = dim_pairs(rank) if rank > 2 else []
        for pair in self._pairs:
            self.dims_choice.addItem(f"{dims_text(pair, self.shape)} (of {rank})")
        if chosen in self._pairs:
            self.dims_choice.setCurrentIndex(self._pairs.index(chosen))
        many = rank > 2 and bool(self.name) and self.mesh is not None
        self.dims_label.setVisible(many)
        self.dims_choice.setVisible(many)

    def drawn_dims(self) -> tuple[int, int]:
        """The two dimensions of the tensor the miniatures draw (down, across)."""
        index = self.dims_choice.currentIndex()
        return self._pairs[index] if 0 <= index < len(self._pairs) else (0, 1)

    def _on_dims(self, _index: int) -> None:
        self.picture.set_plan(self.plan, self.mesh, self.drawn_dims())

    def spec_text(self, box: QComboBox) -> str:
        """The spec a choice names: the chosen entry's, or what was typed."""
        text = box.currentText().strip()
        index = box.findText(text)
        if index >= 0 and box.itemData(index) is not None:
            return str(box.itemData(index))
        return text

    def refresh(self, again: bool = False) -> None:
        """Plan the move between the two chosen shardings and play it (choices planned
        already only play again when ``again``)."""
        if not self.name or self.mesh is None:
            self._shown = None
            self.check.setText("")
            self._show(None, "")
            return
        source, target = self.spec_text(self.source), self.spec_text(self.target)
        if (source, target) == self._shown:
            if again and self.plan is not None:
                self.picture.play()
            return
        self._shown = (source, target)
        self.check.setText("")
        mesh, shape, itemsize = self.mesh, self.shape, self.itemsize

        def plan() -> ReshardPlan:
            return plan_reshard(
                mesh, parse_spec(source or "_"), parse_spec(target or "_"), shape, itemsize
            )

        self._asked += 1
        asked = self._asked
        if self.plan_async is not None and mesh.size > SYNC_DEVICES:
            self._show(None, f"Planning the move on {mesh.size} devices…")

            def done(result: ReshardPlan) -> None:
                if asked == self._asked:
                    self._show(result, kind_text(result))
                    self.picture.play()

            def failed(message: str) -> None:
                if asked == self._asked:
                    self._show(None, f"Cannot plan this move: {message}")

            self.plan_async(plan, done, failed)
            return
        try:
            result = plan()
        except ShardscopeError as exc:
            # The last picture goes: it no longer matches the choices.
            self._show(None, f"Cannot plan this move: {exc}")
            return
        self._show(result, kind_text(result))
        self.picture.play()

    def _show(self, plan: ReshardPlan | None, text: str) -> None:
        self.plan = plan
        self.kind.setText(text)
        self.kind.setStyleSheet("" if plan is not None or not text else f"color: {FAILED.name()}")
        self.picture.set_plan(plan, self.mesh, self.drawn_dims())
        self.run_button.setEnabled(plan is not None)

    def _on_run(self) -> None:
        if self.plan is not None:
            self.runRequested.emit()

    def set_checking(self) -> None:
        """Say the real move is under way."""
        self.run_button.setEnabled(False)
        self.check.setStyleSheet("")
        self.check.setText(f"Running jax.device_put on {self.mesh.size} devices…")

    def show_check(self, plan: ReshardPlan, devices: dict[int, dict]) -> bool:
        """Show whether the real move of ``plan`` matched it (``check_reshard``'s answer)."""
        self.run_button.setEnabled(self.plan is not None)
        if plan is not self.plan:
            return False  # the choices changed meanwhile: the answer is for another move
        ok, text = check_text(plan, devices)
        self.check.setStyleSheet(f"color: {(PASSED if ok else FAILED).name()}")
        self.check.setText(text)
        return ok

    def show_check_failed(self, message: str) -> None:
        """Say the real move could not run."""
        self.run_button.setEnabled(self.plan is not None)
        self.check.setStyleSheet(f"color: {FAILED.name()}")
        self.check.setText(f"The real move failed: {message}")

    def device_pieces(self) -> dict[int, str]:
        """Each device's piece after the move, as text (tests, tooltips)."""
        if self.plan is None:
            return {}
        return {s.device: index_text(s.after) for s in self.plan.steps}
