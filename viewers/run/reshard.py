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

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.reshard import plan_reshard
from shardscope.backend.sharding.spec import parse_spec
from shardscope.backend.units import bytes_text
from shardscope.viewers.run.heatmap import index_text
from shardscope.viewers.run.reshard_picture import ReshardPicture

if TYPE_CHECKING:
    from shardscope.backend.run.reshard import ReshardPlan
    from shardscope.backend.sharding.mesh import Mesh

# Planning is quick up to here (0.3 s for 256 devices); larger meshes plan through
# ``plan_async`` (off the GUI thread) when one is given.
SYNC_DEVICES = 256
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
