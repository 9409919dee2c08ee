"""Messages dock: errors in red, warnings and information in readable colours."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from shardscope.viewers.common.colors import theme_for

LEVELS = ("info", "warning", "error")
MAX_ITEMS = 500


class MessagesView(QListWidget):
    """A list of timestamped one-line messages, newest last."""

    messageAdded = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setAlternatingRowColors(False)
        self.setUniformItemSizes(False)

    def add(self, text: str, level: str = "info") -> None:
        """Append a message (``info``, ``warning`` or ``error``) and scroll to it."""
        level = level if level in LEVELS else "info"
        item = QListWidgetItem(f"{time.strftime('%H:%M:%S')}  {text}")
        item.setData(256, level)
        item.setToolTip(text)
        self._color(item)
        self.addItem(item)
        while self.count() > MAX_ITEMS:
            self.takeItem(0)
        self.scrollToBottom()
        self.messageAdded.emit(level, text)

    def error(self, text: str) -> None:
        self.add(text, "error")

    def messages(self, level: str | None = None) -> list[str]:
        """Texts (without timestamps) of all messages, or of one level."""
        out = []
        for i in range(self.count()):
            item = self.item(i)
            if level is None or item.data(256) == level:
                out.append(item.toolTip())
        return out

    def restyle(self) -> None:
        """Recolour after a theme change."""
        for i in range(self.count()):
            self._color(self.item(i))

    def _color(self, item: QListWidgetItem) -> None:
        theme = theme_for(self)
        level = item.data(256)
        if level == "error":
            item.setForeground(theme.error)
        elif level == "warning":
            item.setForeground(QColor("#E0A030") if theme.is_dark else QColor("#8A5A00"))
        else:
            # No stored colour: plain messages follow the palette, so a theme switch (or a
            # message added before the window is polished) never leaves dark-on-dark text.
            item.setData(Qt.ItemDataRole.ForegroundRole, None)
