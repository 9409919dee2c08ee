"""One pane of the side-by-side graph: a header choosing what the pane shows, and the
marks on the values that differ from the other pane.

A pane shows the session's program in one of ``MODES``: ``now`` (the session, as the
single graph shows it), ``before`` (the final shardings of the propagation before the
last edit), ``shardy`` (the current propagation's final shardings) or ``gspmd`` (the
same with GSPMD's shardings where GSPMD differs). The app gives each mode's shardings as
``Dims`` per value; ``dims_override`` turns them into the scene's ``mode_override``.
``PaneMarks`` outlines, in one view, the badges of the values that differ from the other
pane, with the other pane's spec beside them (the GSPMD mark's look, purple when one of
the panes is GSPMD's, else the changed badges' highlight).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget
from shiboken6 import isValid

from shardscope.backend.sharding.spec import Spec, dims_text
from shardscope.viewers.common.line_label import LineLabel
from shardscope.viewers.common.partitioners import JAX, Partitioners
from shardscope.viewers.graph.markers import GSPMD_COLOR, GspmdMarkItem

if TYPE_CHECKING:
    from shardscope.backend.propagation.conflicts import Conflict
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.run.result import CompiledCollective
    from shardscope.viewers.graph.view import GraphView

MODES: tuple[tuple[str, str], ...] = (
    ("now", "Now"),
    ("before", "Before the last edit"),
    ("shardy", "Shardy"),
    ("gspmd", "GSPMD"),
)
MODE_NAMES = dict(MODES)


def mode_names(names: Partitioners) -> dict[str, str]:
    """Each mode's name for a program whose partitioners ``names`` names: Shardy's and
    GSPMD's modes say whose each is where the program's framework partitions with GSPMD
    (``GSPMD (torch_xla)``, ``Shardy (shardscope)``)."""
    return {**MODE_NAMES, "shardy": names.shardy_short, "gspmd": names.gspmd_short}


# What a difference mark writes beside a badge: the other pane's mode, short.
SHORT = {"now": "now", "before": "before", "shardy": "Shardy", "gspmd": "GSPMD"}

Dims = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class PaneResult:
    """The conflicts and collectives a pane marks where they are not the session's
    analysis's (``GraphMarkers.show_result``): GSPMD's compiled collectives beside its
    shardings, or Shardy's prediction where the session's compile is another
    partitioner's. ``propagation`` is None: the session's compile is none of these;
    ``for_program``: the session's program they belong to (another's are not marked)."""

    for_program: object
    conflicts: tuple[Conflict, ...] = ()
    collectives: tuple[Collective, ...] = ()
    compiled_collectives: tuple[CompiledCollective, ...] | None = None
    propagation: None = None


def as_dims(dims) -> Dims:
    """Any ``[[axis, ...], ...]`` form as a tuple of tuples (comparable, hashable)."""
    return tuple(tuple(d) for d in dims)


def dims_override(dims: Mapping[int, Dims]):
    """A scene ``mode_override`` showing ``dims`` for the values it lists (the others as
    the session shows them). Where the user set the spec it stays marked as theirs."""
    cache: dict[Dims, Spec] = {}

    def override(vid: int, spec: Spec | None, origin: str) -> tuple[Spec | None, str]:
        shown = dims.get(vid)
        if shown is None:
            return spec, origin
        made = cache.get(shown)
        if made is None:
            made = cache[shown] = Spec.of(*[d if d else None for d in shown])
        if origin in ("user", "code"):
            return made, origin
        return made, "propagated" if any(shown) else "none"

    return override


def differing(left: Mapping[int, Dims], right: Mapping[int, Dims]) -> dict[int, tuple]:
    """``{value: (left dims, right dims)}`` for the values the two list differently."""
    out = {}
    for vid, dims in left.items():
        other = right.get(vid)
        if other is not None and other != dims:
            out[vid] = (dims, other)
    return out


class PaneHeader(QWidget):
    """``Shows: [mode]`` and a note; ``modeChanged(mode)`` when the user picks a mode.
    The note is cut to the room the header has: a long one never widens the pane (and
    narrows the window's docks)."""

    modeChanged = Signal(str)

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(f"<b>{title}</b> shows", self)
        self.combo = QComboBox(self)
        for key, name in MODES:
            self.combo.addItem(name, key)
        self.combo.setToolTip("What this pane shows of the program")
        # as wide as its longest mode, whichever the program's names (never cut, even
        # where the pane is narrow: the note gives up its room first)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._fit_combo()
        self.note = LineLabel(self)
        self.note.setObjectName("paneNote")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 3, 6, 3)
        layout.addWidget(self.title)
        layout.addWidget(self.combo)
        layout.addWidget(self.note, 1)
        self.combo.currentIndexChanged.connect(
            lambda _i: self.modeChanged.emit(str(self.combo.currentData()))
        )

    @property
    def mode(self) -> str:
        return str(self.combo.currentData())

    def set_mode(self, mode: str) -> None:
        """Show ``mode`` (emits ``modeChanged`` if it changed)."""
        self.combo.setCurrentIndex(self.combo.findData(mode))

    def set_note(self, text: str) -> None:
        self.note.setText(text)

    def set_names(self, names: Partitioners) -> None:
        """Name Shardy's and GSPMD's modes as ``names`` does."""
        shown = mode_names(names)
        tips = {"shardy": names.shardy, "gspmd": names.gspmd}
        for i in range(self.combo.count()):
            mode = str(self.combo.itemData(i))
            self.combo.setItemText(i, shown[mode])
            self.combo.setItemData(i, tips.get(mode, shown[mode]), Qt.ItemDataRole.ToolTipRole)
        self._fit_combo()

    def _fit_combo(self) -> None:
        self.combo.setMinimumWidth(self.combo.sizeHint().width())

    def mode_texts(self) -> list[str]:
        """The modes as the picker lists them."""
        return [self.combo.itemText(i) for i in range(self.combo.count())]


class PaneMarks(QObject):
    """The difference marks of one view (see the module docstring); drawn again each
    time the view draws a frame."""

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self.view = view
        self.differences: dict[int, tuple[Dims, Dims]] = {}
        self.other_mode = "now"
        self.gspmd = False
        self.names = JAX  # the program's partitioners, for the marks' tooltips
        self.marks: dict[int, list[GspmdMarkItem]] = {}
        view.graph_scene.drawn.connect(self.refresh)

    def close(self) -> None:
        self.view.graph_scene.drawn.disconnect(self.refresh)
        self.set_differences({}, "now")

    def set_differences(
        self, differences: Mapping[int, tuple[Dims, Dims]], other_mode: str, *, gspmd=False
    ) -> None:
        """Mark ``differences`` (value -> (this pane's dims, the other's)); the other
        pane shows ``other_mode``; ``gspmd``: one of the panes is GSPMD's."""
        self.differences = dict(differences)
        self.other_mode = other_mode
        self.gspmd = gspmd
        self.refresh()

    def refresh(self) -> None:
        scene = self.view.graph_scene
        for marks in self.marks.values():
            for mark in marks:
                if isValid(mark) and mark.scene() is scene:
                    scene.removeItem(mark)
        self.marks = {}
        style = self.view.style_
        color = QColor(GSPMD_COLOR) if self.gspmd else QColor(style.theme.highlight)
        other = SHORT.get(self.other_mode, self.other_mode)
        for vid, (mine, theirs) in self.differences.items():
            for badge in scene.badges_of(vid):
                if badge.value_id is None:
                    continue
                here, there = dims_text(mine), dims_text(theirs)
                mark = GspmdMarkItem(
                    badge,
                    here,
                    there,
                    style,
                    label=other,
                    color=color,
                    tooltip=(
                        "The two panes differ on this value\n"
                        f"this pane: {here}\n"
                        f"{mode_names(self.names).get(self.other_mode, other)}: {there}"
                    ),
                )
                self.marks.setdefault(vid, []).append(mark)

    def marked_values(self) -> set[int]:
        """Ids of the values whose badges carry a difference mark."""
        return set(self.marks)
