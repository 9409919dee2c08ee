"""A widget's parts stacked top to bottom, in one call."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget

Part = QWidget | QLayout | tuple[QWidget, int]


def column_layout(parent: QWidget, parts: Sequence[Part], *, spacing: int) -> QVBoxLayout:
    """Lay ``parts`` (widgets, layouts, or ``(widget, stretch)``) down ``parent`` with a
    4-pixel margin and ``spacing`` between them."""
    layout = QVBoxLayout(parent)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.setSpacing(spacing)
    for part in parts:
        if isinstance(part, QLayout):
            layout.addLayout(part)
        elif isinstance(part, tuple):
            layout.addWidget(*part)
        else:
            layout.addWidget(part)
    return layout
