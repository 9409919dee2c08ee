"""Qt side of undo: backend commands mirrored in a QUndoStack.

The backend ``CommandStack`` stays the truth (it is what scripts and tests drive); each
applied command also goes on a ``QUndoStack`` through one adapter class, so Ctrl+Z,
Ctrl+Shift+Z, the Edit menu and a QUndoView history all work.
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand, QUndoStack

from shardscope.backend.session.edits import Command, CommandStack


class CommandAdapter(QUndoCommand):
    """A QUndoCommand that undoes/redoes through the backend stack."""

    def __init__(self, bridge: UndoBridge, command: Command) -> None:
        super().__init__(command.label)
        self.bridge = bridge
        self.command = command
        self._applied = True  # pushed after the backend already applied it

    def redo(self) -> None:
        if self._applied:
            self._applied = False
            return
        self.bridge.stack.redo()

    def undo(self) -> None:
        self.bridge.stack.undo()


class UndoBridge:
    """Pushes commands on the backend stack and mirrors them in ``qstack``."""

    def __init__(self, stack: CommandStack, qstack: QUndoStack | None = None) -> None:
        self.stack = stack
        self.qstack = qstack or QUndoStack()

    def push(self, command: Command) -> None:
        """Apply ``command``; raises (and records nothing) if it is invalid."""
        self.stack.push(command)
        self.qstack.push(CommandAdapter(self, command))

    def clear(self) -> None:
        self.stack.clear()
        self.qstack.clear()
