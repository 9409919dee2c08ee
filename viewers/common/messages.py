"""Messages dock: errors in red, warnings and information in readable colours.

An action the user asked for that fails (an open, File ▸ Run source again) reports with
``MessagesView.fail``: besides the red line in the list, ``failed(text)`` lets an
``ErrorBanner`` show the one line where the user is looking, over the top of the graph
(below its Back and Find bar), put the Messages dock in front (its tab raised, the line
chosen) and write it in the status bar.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QToolButton,
    QWidget,
)

from shardscope.viewers.common.colors import theme_for

LEVELS = ("info", "warning", "error")
MAX_ITEMS = 500


class MessagesView(QListWidget):
    """A list of timestamped one-line messages, newest last."""

    messageAdded = Signal(str, str)
    # an action the user asked for failed: the one-line error (``fail``)
    failed = Signal(str)

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

    def fail(self, text: str) -> None:
        """Report that an action the user asked for failed: an error line, chosen, and
        ``failed(text)`` for whoever shows it where the user is looking."""
        self.add(text, "error")
        self.setCurrentRow(self.count() - 1)
        self.failed.emit(text)

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


# How long a failure stays in the banner and the status bar (ms) unless dismissed.
BANNER_MS = 30_000


class ErrorBanner(QFrame):
    """A red one-line banner over the top of ``window``'s graph that shows each
    failure ``messages`` reports (``MessagesView.failed``), raises the Messages dock and
    writes the line in the status bar. It hides on its close button (``dismiss``) or after
    ``BANNER_MS``; the session under it is left as it was."""

    def __init__(self, window: QMainWindow, messages: MessagesView) -> None:
        super().__init__(window)
        self.window_ = window
        self.messages = messages
        self.setObjectName("errorBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss (the error stays in Messages)")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.dismiss)
        self.text = ""
        self.hide()
        messages.failed.connect(self.show_error)
        window.installEventFilter(self)

    def show_error(self, text: str) -> None:
        """Show ``text`` (one line) in the banner and the status bar, Messages in front."""
        self.text = text
        theme = theme_for(self.window_)
        fill = QColor(theme.error)
        fill.setAlpha(235)
        self.setStyleSheet(
            f"#errorBanner {{ background: {fill.name(QColor.NameFormat.HexArgb)};"
            " border-radius: 4px; }"
            " #errorBanner QLabel, #errorBanner QToolButton { color: white; font-weight: bold; }"
        )
        self.label.setToolTip(text)
        self.window_.statusBar().showMessage(text, BANNER_MS)
        self._raise_messages()
        self._place()
        self.show()
        self.raise_()
        self.timer.start(BANNER_MS)

    def dismiss(self) -> None:
        self.timer.stop()
        self.hide()

    def _raise_messages(self) -> None:
        widget: QWidget | None = self.messages
        while widget is not None and not isinstance(widget, QDockWidget):
            widget = widget.parentWidget()
        if widget is not None:
            widget.show()
            widget.raise_()
        self.messages.scrollToBottom()

    def _place(self) -> None:
        # over the top of the first graphics view in the central area (below its toolbar:
        # Back and Find stay usable), else over the central area itself
        central = self.window_.centralWidget()
        area = central.geometry() if central is not None else self.window_.rect()
        views = central.findChildren(QGraphicsView) if central is not None else []
        shown = [v for v in views if v.isVisible()]
        if shown:
            port = shown[0].viewport()
            top_left = port.mapTo(self.window_, port.rect().topLeft())
            area = QRect(area.x(), top_left.y(), area.width(), port.height())
        width = max(200, area.width() - 24)
        self.setFixedWidth(width)
        self.label.setText(self.text)
        layout = self.layout()
        height = layout.heightForWidth(width) if layout.hasHeightForWidth() else -1
        self.setFixedHeight(max(height, self.minimumSizeHint().height()))
        self.move(area.x() + 12, area.y() + 10)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.window_ and self.isVisible():
            kind = event.type()
            if kind in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
                self._place()
        return False
