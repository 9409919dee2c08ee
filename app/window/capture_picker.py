"""The dialog that picks one function of a capture file: each captured function with the
line of the script that jitted it, its mesh (axes and sizes), its op count and how many
times it was called, the largest first (click a header to sort by another column).

Enter or a double-click opens the chosen function, Cancel or Esc opens nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.program.capture_file import Capture, CapturedFunction, name_in_source

COLUMNS = ("function", "source line", "mesh", "ops", "calls")
_INDEX = Qt.ItemDataRole.UserRole


def mesh_words(mesh: dict[str, int] | None) -> str:
    """``data=4 × model=2 (8 devices)``, or ``no mesh``."""
    if not mesh:
        return "no mesh"
    size = 1
    for n in mesh.values():
        size *= int(n)
    axes = " \u00d7 ".join(f"{a}={n}" for a, n in mesh.items())
    return f"{axes} ({size} device{'s' if size != 1 else ''})"


def source_words(function: CapturedFunction) -> str:
    """``train.py:42``, ``train.py`` or ``unknown``."""
    if not function.file:
        return "unknown"
    name = Path(function.file).name
    return f"{name}:{function.line}" if function.line else name


class _Row(QTreeWidgetItem):
    """A function's row; the number columns sort as numbers."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        column = self.treeWidget().sortColumn() if self.treeWidget() else 0
        mine, theirs = self.data(column, _INDEX + 1), other.data(column, _INDEX + 1)
        if mine is not None and theirs is not None:
            return mine < theirs
        if (mine is None) != (theirs is None):
            return theirs is None  # rows without a value (no line, calls unknown) go last
        return self.text(column).casefold() < other.text(column).casefold()


class CapturePicker(QDialog):
    """Lists ``capture``'s functions; ``chosen()`` is the one picked once it is accepted."""

    def __init__(self, path: str, capture: Capture, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.capture = capture
        name = Path(path).name
        self.setWindowTitle(f"Open captured function \u2014 {name}")
        count = len(capture.functions)
        ran = " ".join(capture.command) if capture.command else "a script"
        self.intro = QLabel(
            f"{name} holds {count} function{'s' if count != 1 else ''}, captured from "
            f"<code>{_escape(ran)}</code> on {capture.devices} devices. Pick the one to open:"
        )
        self.intro.setWordWrap(True)
        self.intro.setToolTip(path)
        self.table = QTreeWidget()
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAllColumnsShowFocus(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        for i, function in enumerate(capture.functions):
            self.table.addTopLevelItem(self._row(i, function))
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COLUMNS.index("ops"), Qt.SortOrder.DescendingOrder)
        header = self.table.header()
        header.setStretchLastSection(False)
        for column in range(len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setCurrentItem(self.table.topLevelItem(0))
        self.table.itemActivated.connect(lambda *_: self.accept())  # Enter (and the style's)
        self.table.itemDoubleClicked.connect(lambda *_: self.accept())
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self._fit()

    def _row(self, index: int, function: CapturedFunction) -> QTreeWidgetItem:
        calls = "?" if function.calls is None else str(function.calls)
        row = _Row(
            [
                name_in_source(function.name),
                source_words(function),
                mesh_words(function.mesh),
                f"{function.ops:,}",
                calls,
            ]
        )
        row.setData(0, _INDEX, index)
        row.setData(COLUMNS.index("ops"), _INDEX + 1, function.ops)
        row.setData(
            COLUMNS.index("calls"), _INDEX + 1, -1 if function.calls is None else function.calls
        )
        if function.file:
            row.setData(
                COLUMNS.index("source line"), _INDEX + 1, (function.file, function.line or 0)
            )
            row.setToolTip(
                1, f"{function.file}:{function.line}" if function.line else function.file
            )
        row.setToolTip(0, f"module {function.module}")
        for column in (COLUMNS.index("ops"), COLUMNS.index("calls")):
            row.setTextAlignment(
                column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
        return row

    def _fit(self) -> None:
        """Wide enough for the title and every column, tall enough for ten rows."""
        header = self.table.header()
        columns = sum(
            max(self.table.sizeHintForColumn(c), header.sectionSizeHint(c)) + 8
            for c in range(len(COLUMNS))
        )
        margins = self.layout().contentsMargins()
        # the frame, a vertical scroll bar's room and the dialog's margins around the table
        columns += 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        columns += margins.left() + margins.right()
        title = self.fontMetrics().horizontalAdvance(self.windowTitle()) + 160
        rows = min(10, max(3, self.table.topLevelItemCount()))
        row_height = max(self.table.sizeHintForRow(0), self.fontMetrics().height() + 6)
        height = rows * row_height + self.table.header().sizeHint().height() + 150
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        width = max(columns, title, 560)
        if screen is not None:
            width, height = min(width, screen.width() - 80), min(height, screen.height() - 80)
        self.resize(width, height)

    def chosen(self) -> CapturedFunction | None:
        """The function of the current row, or None."""
        item = self.table.currentItem()
        if item is None:
            return None
        return self.capture.functions[int(item.data(0, _INDEX))]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pick_captured(parent: QWidget | None, path: str, capture: Capture) -> CapturedFunction | None:
    """Show the picker for ``capture`` (read from ``path``); the function the user opens,
    or None if they cancel."""
    dialog = CapturePicker(path, capture, parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.chosen()
    finally:
        dialog.deleteLater()
