"""Synthetic Qt events shared by GUI tests."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDropEvent


def drop(view, pos, mime):
    """Deliver a copy-drop of ``mime`` at viewport position ``pos``, as a real drag ends.

    QDropEvent does not own its mime data: the caller keeps ``mime`` alive.
    """
    event = QDropEvent(
        QPointF(pos),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    view.dropEvent(event)
    return event
