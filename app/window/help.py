"""The Help menu's content: the shortcuts dialog and the first-run hint.

The shortcuts dialog is built from the window's QActions each time it opens, so it lists
exactly the keys that work, under the menu that holds each action, and then the keys the
timeline binds itself (from its own key table: space, the arrows, Home, End, Esc). The first-run hint
is a banner above the graph that says what to do first; it shows at the first start
only (``Settings.first_run_hint_shown``) and again from Help ▸ First steps.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shardscope.viewers.timeline.timeline_panel import TimelinePanel
from shardscope.viewers.timeline.timeline_panel import key_rows as timeline_key_rows


@dataclass(frozen=True)
class ShortcutRow:
    keys: str
    action: str
    where: str
    # The actions a key shared by several is listed for (``action`` joins them).
    shared: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.shared:
            object.__setattr__(self, "shared", (self.action,))


def _joined(texts: tuple[str, ...]) -> str:
    """``Cancel a`` and ``Cancel b`` as ``Cancel a or b``; texts without a first word in
    common as ``a; b``."""
    first = {t.split(" ", 1)[0] for t in texts}
    if len(first) == 1 and all(" " in t for t in texts):
        (word,) = first
        return f"{word} " + " or ".join(t.split(" ", 1)[1] for t in texts)
    return "; ".join(texts)


def plain(text: str) -> str:
    """A menu text without its mnemonic marks and ellipsis: ``&Find…`` -> ``Find``."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def _keys(action: QAction) -> str:
    return ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())


def shortcut_rows(window: QWidget) -> list[ShortcutRow]:
    """Every action of ``window`` that has a shortcut: those of the menu bar first, in
    menu order, then any other (a dock's or a panel's own), each key listed once. A key that
    several of the window's own actions share, each enabled at its time (Esc cancels
    Expand all or a run), lists them all in one row."""
    rows: list[ShortcutRow] = []
    seen: dict[str, int] = {}

    def add(action: QAction, where: str) -> None:
        keys, text = _keys(action), plain(action.text())
        if not keys or not text:
            return
        if keys not in seen:
            seen[keys] = len(rows)
            rows.append(ShortcutRow(keys, text, where))
            return
        row = rows[seen[keys]]
        if where == "window" and row.where == "window" and text not in row.shared:
            shared = tuple(sorted([*row.shared, text]))
            rows[seen[keys]] = ShortcutRow(keys, _joined(shared), where, shared)

    def walk(menu: QMenu, where: str) -> None:
        for action in menu.actions():
            if action.menu() is not None:
                walk(action.menu(), f"{where} ▸ {plain(action.text())}")
            else:
                add(action, where)

    menu_bar = getattr(window, "menuBar", None)
    if menu_bar is not None:
        for top in menu_bar().actions():
            if top.menu() is not None:
                walk(top.menu(), plain(top.text()))
    for action in window.findChildren(QAction):
        parent = action.parent()
        where = plain(parent.windowTitle()) if isinstance(parent, QWidget) else ""
        add(action, where if where and parent is not window else "window")
    if window.findChild(TimelinePanel) is not None:
        for keys, text, where in timeline_key_rows():
            if keys not in seen:
                seen[keys] = len(rows)
                rows.append(ShortcutRow(keys, text, where))
                continue
            # a key the window uses too (Esc cancels a long task while one runs)
            row = rows[seen[keys]]
            rows[seen[keys]] = ShortcutRow(
                keys, f"{row.action}; {text}", f"{row.where}; {where}", row.shared
            )
    return rows


class ShortcutsDialog(QDialog):
    """A table of the window's shortcuts (see ``shortcut_rows``)."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = shortcut_rows(window)
        self.table = QTableWidget(len(self.rows), 3, self)
        self.table.setHorizontalHeaderLabels(["Keys", "Action", "Where"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        for r, row in enumerate(self.rows):
            for c, text in enumerate((row.keys, row.action, row.where)):
                self.table.setItem(r, c, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        mouse = QLabel(
            "Mouse: double-click a scope to unfold it, its name to fold it, an op with ⤵ "
            "to enter it; drag a mesh axis from the Spec palette onto a tensor's badge "
            "(it replaces the dimension's axes; hold Shift or Ctrl as you drop to append it); "
            "wheel to zoom; right-click for more.",
            self,
        )
        mouse.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(mouse)
        layout.addWidget(buttons)
        self.resize(560, 520)

    def texts(self) -> list[tuple[str, str, str]]:
        """What the table shows, row by row."""
        return [
            tuple(self.table.item(r, c).text() for c in range(3))
            for r in range(self.table.rowCount())
        ]


class FirstRunHint(QFrame):
    """A banner that says what to do first, with a button to close it."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("first_run_hint")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(text, self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.close_button = QPushButton("Got it", self)
        self.close_button.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)


class WindowHelp:
    """The Help menu's handlers for one window (a ``MainWindow``: its ``settings``,
    ``menu_actions`` and ``graph_panel``)."""

    def __init__(self, window: QMainWindow) -> None:
        self.window = window
        self.dialog: ShortcutsDialog | None = None
        self.hint: FirstRunHint | None = None

    def show_shortcuts(self) -> ShortcutsDialog:
        """Open the shortcuts dialog (rebuilt from the actions as they are now)."""
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        self.dialog = ShortcutsDialog(self.window)
        self.dialog.show()
        return self.dialog

    def hint_text(self) -> str:
        """What to do first, naming the keys the window's actions really have."""
        actions = self.window.menu_actions

        def key(name: str) -> str:
            action = actions.get(name)
            keys = _keys(action) if action is not None else ""
            return f" ({html.escape(keys.split(', ')[0])})" if keys else ""

        return (
            "<b>New here?</b> 1. Open a program: File ▸ Open example…"
            f"{key('open_example')} or Open program…{key('open_program')}. "
            "2. Drag a mesh axis from the <i>Spec palette</i> onto a dimension chip of a "
            "tensor's badge (the chips under each edge): that shards the tensor. "
            "3. Propagation then shows every tensor's sharding (Propagation ▸ Propagate "
            f"now{key('propagate')} runs it at once); double-click a scope to unfold it. "
            f"Find{key('find')} takes names and <i>axis:model</i>, "
            "<i>collective:all-gather</i> or <i>conflict</i>. "
            f"Help ▸ Keyboard shortcuts{key('shortcuts')} lists every key."
        )

    def show_first_steps(self) -> FirstRunHint:
        """Show the first-run hint above the graph (again)."""
        if self.hint is None:
            self.hint = FirstRunHint(self.hint_text(), self.window.graph_panel)
            self.window.graph_panel.layout().insertWidget(1, self.hint)
        self.hint.show()
        return self.hint

    def first_run(self) -> FirstRunHint | None:
        """At the first start only: show the hint, and remember it was shown."""
        settings = self.window.settings
        if settings.first_run_hint_shown():
            return None
        settings.set_first_run_hint_shown()
        return self.show_first_steps()
