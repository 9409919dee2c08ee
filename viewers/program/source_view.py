"""Source view: the file an op came from, scrolled to its line, the line highlighted; for
a program's argument, the line of its parameter in the signature of the file's
``PROGRAM`` function (``show_argument``), or no highlight and a header that says why.

A program opened from a saved session shows the source lines saved with it (the lines
around its ops, as they were when it was lowered), not the files as they are now."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.files import read_text
from shardscope.backend.program.signature import argument_line
from shardscope.backend.program.snippets import Snippets, snippet_text
from shardscope.viewers.common.damage import quiet_change

MAX_BYTES = 2_000_000
START_HINT = "select an op or a tensor to see its line"


class _HeaderLine(QLineEdit):
    """The header: selectable text that shows its start, drawn like a label."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.setReadOnly(True)
        self.setFrame(False)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.setStyleSheet("QLineEdit { background: transparent; border: none; }")

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setCursorPosition(0)


class SourceView(QWidget):
    """Read-only source with one highlighted line; shows why when there is no source."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # A read-only line, not a label: a new text repaints the line alone (a label asks
        # for a new layout, and the main window lays out and repaints all its docks), and
        # a long one scrolls inside the dock instead of widening it.
        self.header = _HeaderLine("No op selected")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        # both bars always there: a file with longer (or more) lines than the last one
        # would show a bar after the change, when the text's layout catches up, and
        # repaint the whole dock a second time
        self.text.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.text.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.0))
        self.text.setFont(font)
        # Two lines at the least: the dock may be short (the docks below it need room).
        self.text.setMinimumHeight(2 * self.text.fontMetrics().lineSpacing() + 12)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.text, 1)
        self.path: str | None = None
        self.line: int | None = None
        self._cache: dict[str, str] = {}
        self._saved: Snippets = {}

    def reset(self, saved: Snippets | None = None) -> None:
        """Forget every file read so far (a newly loaded program may have changed them);
        ``saved``: the source lines a program opened from a session keeps, shown instead
        of the files."""
        self._cache.clear()
        self._saved = dict(saved or {})
        self.path, self.line = None, None
        self.header.setText("No op selected")
        self.header.setToolTip("")
        self.text.setPlainText("")

    def show_location(self, path: str | None, line: int | None, what: str = "") -> None:
        """Show ``path`` around ``line`` (1-based); a missing file says so in the header."""
        # a new line scrolls the text and moves the highlight: over a forwarded display,
        # repaint the pixels that changed rather than the whole dock
        with quiet_change(self):
            self._show_location(path, line, what)

    def _show_location(self, path: str | None, line: int | None, what: str) -> None:
        if not path:
            self.path, self.line = None, None
            self.header.setText(f"{what}: no source location" if what else "No source location")
            self.text.setPlainText("")
            return
        if path != self.path:
            content = self._read(path)
            if content is None:
                self.path, self.line = None, None
                where = "not saved with the session" if self._saved else "file not readable here"
                self.header.setText(f"{path}{f':{line}' if line else ''} ({where})")
                self.text.setPlainText("")
                return
            self.text.setPlainText(content)
            self.path = path
        self.line = line
        name = Path(path).name if line is None else f"{Path(path).name}:{line}"
        saved = "  (as saved with the session)" if path in self._saved else ""
        self.header.setText(name + (f"  —  {what}" if what else "") + saved)
        self.header.setToolTip(path)
        self._highlight(line)

    def show_start(self, path: str | None, line: int | None) -> None:
        """Before anything is selected: ``path`` around ``line`` (where the program's ops
        begin), nothing highlighted, the header saying how to find an op's line. An
        unreadable file leaves the view as it was."""
        with quiet_change(self):
            content = self._read(path) if path else None
            if content is None:
                return
            self._show_location(path, None, "")
            self._scroll_to(line)
            self.header.setText(f"{Path(path).name}  —  {START_HINT}")

    def show_argument(
        self,
        path: str | None,
        name: str,
        function: str | None = None,
        def_line: int | None = None,
    ) -> bool:
        """Show where argument ``name`` is written: its parameter in the signature of the
        ``PROGRAM`` function of ``path`` (the program's file), or with ``def_line`` of the
        function defined there (a captured one). Without one (an ``.mlir`` module has no
        signature, a called function's arguments have no line of their own), the
        highlight goes and the header says why. True if a line is shown."""
        what = f"argument {name}"
        if function is not None:
            self._no_line(f"{what} of {function}: a called function's argument has no line")
            return False
        content = self._read(path) if path and path.endswith(".py") else None
        found = argument_line(content, name, def_line) if content is not None else None
        if found is None:
            if not path or not path.endswith(".py"):
                why = "the program did not come from a Python file: its arguments have no line"
            elif content is None:
                why = "its file is not readable here"
            elif def_line is not None:
                why = f"{Path(path).name} defines no function at line {def_line}"
            else:
                why = f"{Path(path).name} names no PROGRAM function with a signature"
            self._no_line(f"{what}: {why}")
            return False
        where = f"parameter of {found.function}" if found.exact else f"of {found.function}"
        self.show_location(path, found.line, f"{what}, {where}")
        return True

    def _no_line(self, text: str) -> None:
        """No line to show: keep the text, drop the highlight, say why in the header."""
        self.line = None
        self.header.setText(text)
        self._highlight(None)

    def _read(self, path: str) -> str | None:
        if self._saved:
            lines = self._saved.get(path)
            return snippet_text(lines) if lines else None
        if path in self._cache:
            return self._cache[path]
        try:
            # never waits on a FIFO or reads a device a program's locations name
            content = read_text(path, MAX_BYTES, "", errors="replace")
        except (OSError, ShardscopeError):
            return None
        self._cache[path] = content
        return content

    def _highlight(self, line: int | None) -> None:
        if not line:
            self.text.setExtraSelections([])
            return
        block = self.text.document().findBlockByLineNumber(line - 1)
        cursor = QTextCursor(block)
        sel = QTextEdit.ExtraSelection()
        dark = self.palette().base().color().lightness() < 128
        sel.format.setBackground(QColor("#5A4A00") if dark else QColor("#FFF0A0"))
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        sel.cursor = cursor
        self.text.setExtraSelections([sel])
        self._scroll_to(line)

    def _scroll_to(self, line: int | None) -> None:
        """Put the cursor on ``line`` (1-based) and that line in the middle of the view."""
        if not line:
            return
        block = self.text.document().findBlockByLineNumber(line - 1)
        self.text.setTextCursor(QTextCursor(block))
        self.text.centerCursor()
