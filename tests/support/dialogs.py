"""Answering the window's modal dialogs as a user does, from a timer while they show."""

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from shardscope.app.window.capture_picker import CapturePicker


def picker_rows(dialog: CapturePicker) -> list[list[str]]:
    """The capture picker's rows as shown, top to bottom, one text per column."""
    table = dialog.table
    return [
        [table.topLevelItem(r).text(c) for c in range(table.columnCount())]
        for r in range(table.topLevelItemCount())
    ]


def answer_picker(qtbot, seen: list, row: int | None = None) -> None:
    """When the capture picker shows: note its rows in ``seen``, then open ``row`` with
    Enter, or with None press Cancel."""

    def answer():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, CapturePicker):
            QTimer.singleShot(20, answer)
            return
        seen.append(picker_rows(dialog))
        if row is None:
            button = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
            return
        dialog.table.setCurrentItem(dialog.table.topLevelItem(row))
        qtbot.keyClick(dialog.table, Qt.Key.Key_Return)

    QTimer.singleShot(20, answer)
