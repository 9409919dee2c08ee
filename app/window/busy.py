"""The status bar's sign that a long task is under way: a busy bar, what is being done, a
Cancel button, and Esc to cancel while it shows.

Expand/collapse all (``folding``) and Run on devices (``run``) each have one. While
several show at once, Esc belongs to the one shown last (two enabled actions on one key
would make Qt fire neither); when it hides, Esc goes back to the one before it. One for
work the user did not start (``esc=False``: the compile that follows each propagation)
leaves Esc to the rest of the window: only its button cancels.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QToolButton

from shardscope.app.window.display import remote_display


class StatusBusy(QObject):
    """See the module docstring. ``cancel`` is called by the button and by Esc."""

    def __init__(
        self,
        window: QMainWindow,
        *,
        action: str,
        tooltip: str,
        cancel: Callable[[], object],
        esc: bool = True,
        extra: QToolButton | None = None,
    ) -> None:
        """``extra``: a button of the task's own, before Cancel, shown only where the
        caller shows it (``extra.setVisible``) while the indicator shows."""
        super().__init__(window)
        self.esc = esc
        self._shown = False
        # over a forwarded display each frame of the moving bar crosses the network (a
        # few hundred KiB a second, as bench_x11 measures): there it is left out
        self._still = remote_display(os.environ) is not None
        # The window's indicators that show, oldest first: the last one owns Esc.
        if not hasattr(window, "_busy_showing"):
            window._busy_showing = []  # type: ignore[attr-defined]
        self._showing: list[StatusBusy] = window._busy_showing  # type: ignore[attr-defined]
        bar = window.statusBar()
        self.bar = QProgressBar(bar)
        self.bar.setRange(0, 0)  # an indicator with no end known
        self.bar.setMaximumWidth(120)
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        self.label = QLabel(bar)
        self.cancel_button = QToolButton(bar)
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip(tooltip)
        self.cancel_button.clicked.connect(cancel)
        self.extra = extra
        # permanent widgets: a passing status message does not hide them
        for widget in (self.bar, self.label, extra, self.cancel_button):
            if widget is not None:
                bar.addPermanentWidget(widget)
                widget.hide()
        self.cancel_action = QAction(action, window)
        if esc:
            self.cancel_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.cancel_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.cancel_action.setEnabled(False)  # Esc belongs to other widgets meanwhile
        self.cancel_action.triggered.connect(cancel)
        window.addAction(self.cancel_action)

    @property
    def _widgets(self) -> tuple:
        return (self.bar, self.label, self.cancel_button)

    @property
    def still(self) -> bool:
        """Whether the moving bar is left out (a remote display): text and Cancel only."""
        return self._still

    @still.setter
    def still(self, still: bool) -> None:
        self._still = bool(still)
        if self._shown:
            self.bar.setVisible(not self._still)

    @property
    def showing(self) -> bool:
        return self._shown

    def show(self, text: str) -> None:
        """Show the bar with ``text`` (shown already: only the text changes)."""
        self.label.setText(text)
        for widget in self._widgets:
            widget.setVisible(widget is not self.bar or not self._still)
        self._shown = True
        if self.esc and self not in self._showing:
            self._showing.append(self)
        self._give_esc()

    def hide(self) -> None:
        for widget in self._widgets:
            widget.hide()
        if self.extra is not None:
            self.extra.hide()
        self._shown = False
        if self in self._showing:
            self._showing.remove(self)
        self.cancel_action.setEnabled(False)
        self._give_esc()

    def _give_esc(self) -> None:
        last = len(self._showing) - 1
        for i, busy in enumerate(self._showing):
            busy.cancel_action.setEnabled(i == last)
