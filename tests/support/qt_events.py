"""Synthetic Qt events shared by GUI tests."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDropEvent


def drop(view, pos, mime, modifiers=Qt.KeyboardModifier.NoModifier):
    """Deliver a copy-drop of ``mime`` at viewport position ``pos``, as a real drag ends
    with ``modifiers`` (keys) held.

    QDropEvent does not own its mime data: the caller keeps ``mime`` alive.
    """
    event = QDropEvent(
        QPointF(pos),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        modifiers,
    )
    view.dropEvent(event)
    return event
