"""What the window's file actions work with: ``FileContext``, given once to each of them
(loading, saving, exporting) instead of the same five arguments to each."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QMainWindow

from shardscope.app.window.settings import Settings
from shardscope.app.window.undo import UndoBridge
from shardscope.backend.session.document import Session
from shardscope.viewers.common.messages import MessagesView


@dataclass(frozen=True)
class FileContext:
    """The window (the dialogs' parent), the session, the undo stack (whose clean state
    says whether edits are saved), the settings (last folders, recent files) and Messages."""

    window: QMainWindow
    session: Session
    undo: UndoBridge
    settings: Settings
    messages: MessagesView


class FilePart:
    """One of the window's file actions: it keeps its ``FileContext``'s parts at hand."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.window = context.window
        self.session = context.session
        self.undo = context.undo
        self.settings = context.settings
        self.messages = context.messages
