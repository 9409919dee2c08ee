"""A label of one line of plain text, cut to the width it has."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class LineLabel(QLabel):
    """One line of plain text, cut with ``…`` where the dock is narrower; the whole text
    is its tooltip (the dock is short: the table keeps the room)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._tip = ""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        super().setToolTip(f"{text}\n\n{self._tip}".strip() if text else self._tip)

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self._tip = tip
        self.setText(self.text())

    def sizeHint(self) -> QSize:
        return QSize(100, self.fontMetrics().height() + 2)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignVCenter), self.shown_text)

    @property
    def shown_text(self) -> str:
        """The text on one line, as it fits the label's width now."""
        line = " ".join(self.text().split())
        return self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, self.width())
