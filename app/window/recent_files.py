"""File > Open recent: the programs and sessions opened or saved last, each reopening as
what it is. Files are kept by absolute path (with a capture's ``#NAME`` and a program's
``?PARAMS``), so a window started in another folder reopens them; an entry whose file
is gone says so and where to open it from instead."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtWidgets import QMenu, QWidget

from shardscope.app.window.settings import Settings
from shardscope.backend.program.capture_file import split_capture_source
from shardscope.backend.program.load import EXAMPLE_PREFIX, split_source

WHAT_OPENS = (
    "File > Open program opens a .py or .mlir program or a capture .json (FILE.json#NAME "
    "for one of its functions), File > Open session a saved session .json, and File > "
    "Open example a built-in example"
)


def file_part(item: str) -> tuple[str, str]:
    """``item`` split into its file and what follows it: a capture's ``#NAME``, a
    program's ``?PARAMS`` (``("", item)`` for an example)."""
    if item.startswith(EXAMPLE_PREFIX):
        return "", item
    if ".json#" in item:
        base = split_capture_source(item)[0]
    else:
        base = split_source(item)[0]
    return base, item[len(base) :]


def absolute_item(item: str) -> str:
    """``item`` with its file named by absolute path (relative to the current folder);
    its ``#NAME`` or ``?PARAMS`` kept, an example as it is."""
    base, rest = file_part(item)
    if not base:
        return item
    return os.path.abspath(os.path.expanduser(base)) + rest


class RecentMenu(QMenu):
    """The Open recent submenu, refilled from the settings' recent list. ``open_file``
    reopens an entry; ``fail`` reports one whose file is gone."""

    def __init__(
        self,
        parent: QWidget,
        settings: Settings,
        open_file: Callable[[str], object],
        fail: Callable[[str], object],
    ) -> None:
        super().__init__("Open &recent", parent)
        self.settings = settings
        self.open_file = open_file
        self.fail = fail
        self.refill()

    def add(self, item: str) -> None:
        """Put ``item`` (by absolute path) first in the recent list and in the menu."""
        self.settings.add_recent(absolute_item(item))
        self.refill()

    def refill(self) -> None:
        """Refill the menu: each item reopens as what it is (``open_file``); empty, the
        menu is disabled."""
        self.clear()
        for item in self.settings.recent():
            act = self.addAction(item)
            act.triggered.connect(lambda _=False, p=item: self.reopen(p))
        self.setEnabled(bool(self.settings.recent()))

    def reopen(self, item: str) -> bool:
        """Open recent entry ``item``; False (and said why) if its file is gone."""
        base = file_part(item)[0]
        if base and not os.path.lexists(os.path.expanduser(base)):
            self.fail(f"{base}: no such file (moved or deleted since it was opened); {WHAT_OPENS}")
            return False
        return bool(self.open_file(item))
