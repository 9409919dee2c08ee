"""Below the Collectives dock's table: the chosen collective explained.

A predicted collective shows the device groups it runs in; a compiled one its device
groups (a collective-permute's as pairs), the sharding its tensor had and the one needed
and why, and buttons to the conflict and to the provenance that explain it
(``conflictRequested``, ``provenanceRequested``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from shardscope.viewers.debugger.collective_lines import explain_text, groups_text, permute_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.run.result import CompiledCollective


def _selectable_label(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _scrolling(parts: list[QWidget | QHBoxLayout], parent: QWidget) -> QScrollArea:
    """``parts`` one under another in a frameless area that scrolls when the dock is
    shorter than they are (a collective XLA combined from many explains each)."""
    inner = QWidget()
    column = QVBoxLayout(inner)
    column.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QWidget):
            column.addWidget(part)
        else:
            column.addLayout(part)
    area = QScrollArea(parent)
    area.setWidget(inner)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setMinimumHeight(3 * area.fontMetrics().lineSpacing())
    return area


class ChosenCollective(QObject):
    """The chosen collective's lines and links (``groups`` above ``links``, in ``box``,
    which the dock that owns them lays out); see the module docstring."""

    conflictRequested = Signal(int)
    provenanceRequested = Signal(int)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.collective: CompiledCollective | None = None
        self.groups = _selectable_label(parent)
        self.explain = _selectable_label(parent)
        self.conflict_button = QPushButton("Show the conflict", parent)
        self.conflict_button.setToolTip("Its factor table in the Conflicts dock")
        self.conflict_button.clicked.connect(self._on_conflict)
        self.provenance_button = QPushButton("Show provenance", parent)
        self.provenance_button.setToolTip("Where the tensor's sharding came from (Provenance)")
        self.provenance_button.clicked.connect(self._on_provenance)
        # The buttons one above the other beside the text: a narrow dock keeps both.
        buttons = QVBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.conflict_button)
        buttons.addWidget(self.provenance_button)
        buttons.addStretch(1)
        self.links = QHBoxLayout()
        self.links.setContentsMargins(0, 0, 0, 0)
        self.links.addWidget(self.explain, 1)
        self.links.addLayout(buttons)
        self.box = _scrolling([self.groups, self.links], parent)

    def clear(self) -> None:
        """Nothing chosen: every line and button hidden."""
        for label in (self.groups, self.explain):
            label.setText("")
            label.setVisible(False)
        self.conflict_button.setVisible(False)
        self.provenance_button.setVisible(False)
        self.box.setVisible(False)
        self.collective = None

    def show_predicted(self, c: Collective, groups: list[tuple[int, ...]]) -> None:
        """Say which device groups predicted collective ``c`` runs in."""
        self.clear()
        self.groups.setText(groups_text(c.kind, c.axes, groups))
        self.groups.setVisible(bool(groups))
        self.box.setVisible(bool(groups))

    def show_compiled(
        self, c: CompiledCollective, groups: list[tuple[int, ...]], graph: ProgramGraph | None
    ) -> None:
        """Explain compiled collective ``c``: its device groups, why it is there, and
        its links."""
        self.clear()
        self.collective = c
        if c.device_groups and c.kind == "collective-permute":
            self.groups.setText(permute_text(c, groups))
        else:
            self.groups.setText(groups_text(c.kind, c.axes, groups))
        self.groups.setVisible(bool(groups))
        self.explain.setText(explain_text(c, graph))
        self.explain.setVisible(True)
        self.box.setVisible(True)
        cause = c.cause
        self.conflict_button.setVisible(cause is not None and cause.conflict is not None)
        self.provenance_button.setVisible(cause is not None and cause.provenance is not None)

    def _on_conflict(self) -> None:
        c = self.collective
        if c is not None and c.cause is not None and c.cause.conflict is not None:
            self.conflictRequested.emit(int(c.cause.conflict))

    def _on_provenance(self) -> None:
        c = self.collective
        if c is not None and c.cause is not None and c.cause.provenance is not None:
            self.provenanceRequested.emit(int(c.cause.provenance))
