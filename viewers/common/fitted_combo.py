"""A combo box as wide as its longest entry where there is room for it, and narrower,
its text cut with ``…``, where there is not."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)


class FittedCombo(QComboBox):
    """Its size hint fits its longest entry whole; it shrinks to ``least`` characters,
    where the current entry is cut with ``…`` and whole in the tooltip."""

    def __init__(self, parent: QWidget | None = None, *, least: int = 10) -> None:
        super().__init__(parent)
        self.least = least
        self._tip = ""
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.currentIndexChanged.connect(lambda _i: self._show_tip())

    def setToolTip(self, tip: str) -> None:  # noqa: N802 - Qt's name
        self._tip = tip
        self._show_tip()

    def _show_tip(self) -> None:
        text = self.currentText()
        super().setToolTip(f"{text}\n\n{self._tip}".strip() if text else self._tip)

    def minimumSizeHint(self) -> QSize:
        full = super().minimumSizeHint()
        chars = self.fontMetrics().horizontalAdvance("x" * self.least)
        frame = super().sizeHint().width() - self._text_room(super().sizeHint().width())
        return QSize(min(full.width(), chars + frame), full.height())

    def _text_room(self, width: int) -> int:
        """The width the current text has in a box ``width`` pixels wide."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.rect.setWidth(width)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, self
        )
        return field.width()

    @property
    def shown_text(self) -> str:
        """The current entry as drawn at the box's width now."""
        room = self._text_room(self.width()) - 2
        return self.fontMetrics().elidedText(self.currentText(), Qt.TextElideMode.ElideRight, room)

    def paintEvent(self, _event) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        option.currentText = self.shown_text
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
