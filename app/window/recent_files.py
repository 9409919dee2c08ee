"""File > Open recent: the programs and sessions opened or saved last, each reopening as
what it is."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMenu, QWidget

from shardscope.app.window.settings import Settings


class RecentMenu(QMenu):
    """The Open recent submenu, refilled from the settings' recent list."""

    def __init__(
        self, parent: QWidget, settings: Settings, open_file: Callable[[str], object]
    ) -> None:
        super().__init__("Open &recent", parent)
        self.settings = settings
        self.open_file = open_file
        self.refill()

    def add(self, item: str) -> None:
        """Put ``item`` first in the recent list and in the menu."""
        self.settings.add_recent(item)
        self.refill()

    def refill(self) -> None:
        """Refill the menu: each item reopens as what it is (``open_file``); empty, the
        menu is disabled."""
        self.clear()
        for item in self.settings.recent():
            act = self.addAction(item)
            act.triggered.connect(lambda _=False, p=item: self.open_file(p))
        self.setEnabled(bool(self.settings.recent()))
