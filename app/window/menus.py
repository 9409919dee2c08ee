"""The window's menus as one table, ``MENUS``, and ``build_menus`` that turns it into QActions.

Each ``Action`` row names its handler as an attribute path on the window
(``"files.save_session"``, ``"graph.fit"``), so the table stays plain data and a missing
handler fails when the window is built, not when the user picks the action. Rows that Qt
builds itself (the undo stack's Undo/Redo, the docks' show/hide toggles) and submenus
owned by another part of the window have their own row kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import QMainWindow, QMenu

StandardKey = QKeySequence.StandardKey
Shortcut = str | QKeySequence.StandardKey


@dataclass(frozen=True)
class Action:
    """A menu entry that calls ``handler(*args)`` on the window (checkable ones get the new
    checked state instead); ``key`` names it in the built window's ``menu_actions``."""

    key: str
    text: str
    handler: str
    shortcut: Shortcut | tuple[Shortcut, ...] = ()
    args: tuple[Any, ...] = ()
    checkable: bool = False
    checked: str | None = None  # attribute path of the initial checked state


@dataclass(frozen=True)
class UndoAction:
    """The undo stack's own Undo (``redo=False``) or Redo action: Qt keeps its text and
    enabled state in step with the stack."""

    key: str
    text: str
    redo: bool
    shortcut: Shortcut | tuple[Shortcut, ...] = ()


@dataclass(frozen=True)
class Submenu:
    """A QMenu the window holds at ``menu`` (an attribute path), shown as a submenu."""

    menu: str


@dataclass(frozen=True)
class DockToggles:
    """The show/hide actions of the docks listed in the View menu."""


@dataclass(frozen=True)
class Separator:
    pass


Row = Action | UndoAction | Submenu | DockToggles | Separator


@dataclass(frozen=True)
class Menu:
    title: str
    rows: tuple[Row, ...]


SEPARATOR = Separator()

MENUS: tuple[Menu, ...] = (
    Menu(
        "&File",
        (
            Action("open_program", "&Open program…", "files.ask_open_program", StandardKey.Open),
            Action("open_example", "Open &example…", "files.ask_open_example", "Ctrl+Shift+E"),
            Action("open_session", "Open &session…", "files.ask_open_session", "Ctrl+Shift+O"),
            Submenu("files.recent_menu"),
            Action("rerun_source", "&Run source again", "files.rerun_source", "Ctrl+Shift+R"),
            SEPARATOR,
            Action("save", "&Save session", "files.save_session", StandardKey.Save),
            Action("save_as", "Save session &as…", "files.ask_save_session_as", "Ctrl+Shift+S"),
            SEPARATOR,
            Action("export_png", "Export view as &PNG…", "files.ask_export", "Ctrl+E", ("png",)),
            Action(
                "export_svg", "Export view as S&VG…", "files.ask_export", "Ctrl+Shift+X", ("svg",)
            ),
            Action("export_gif", "Export propagation a&nimation…", "gif_export.ask"),
            SEPARATOR,
            Action("quit", "&Quit", "close", StandardKey.Quit),
        ),
    ),
    Menu(
        "&Edit",
        (
            UndoAction("undo", "&Undo", redo=False, shortcut=StandardKey.Undo),
            UndoAction("redo", "&Redo", redo=True, shortcut=("Ctrl+Shift+Z", "Ctrl+Y")),
            SEPARATOR,
            Action("find", "&Find…", "focus_find", StandardKey.Find),
        ),
    ),
    Menu(
        "&View",
        (
            Action("fit", "&Fit to window", "graph.fit", "Ctrl+0"),
            Action("fit_all", "Show &everything", "graph.fit_all", "Ctrl+Shift+0"),
            Action("zoom_in", "Zoom &in", "graph.zoom", ("Ctrl+=", "Ctrl++"), (1.25,)),
            Action("zoom_out", "Zoom &out", "graph.zoom", "Ctrl+-", (0.8,)),
            Action("back", "&Back (leave region)", "graph.back", "Alt+Left"),
            Action("expand_all", "E&xpand all scopes", "graph.expand_all", "Ctrl+Shift+A"),
            Action("collapse_all", "&Collapse all scopes", "graph.collapse_all", "Ctrl+Shift+C"),
            Action(
                "side_by_side",
                "Side by si&de",
                "panes.set_on",
                "Ctrl+Shift+D",
                checkable=True,
                checked="panes.on",
            ),
            SEPARATOR,
            Action(
                "compare_gspmd",
                "Compare with &GSPMD",
                "gspmd.set_on",
                "Ctrl+Shift+G",
                checkable=True,
                checked="gspmd.on",
            ),
            Action("legend", "Badge &legend", "legend_button.open_legend"),
            SEPARATOR,
            Action("toggle_theme", "Toggle &dark/light theme", "toggle_theme", "Ctrl+T"),
            SEPARATOR,
            Action("reset_layout", "&Reset layout", "reset_layout"),
            DockToggles(),
        ),
    ),
    Menu(
        "&Propagation",
        (
            Action("propagate", "&Propagate now", "propagation.propagate_now", "F5"),
            Action(
                "auto_propagate",
                "&Automatic after each edit",
                "propagation.set_auto",
                checkable=True,
                checked="propagation.auto",
            ),
            SEPARATOR,
            Action("run", "&Run on devices", "run.run_now", "Ctrl+R"),
        ),
    ),
    Menu(
        "&Help",
        (
            Action("shortcuts", "&Keyboard shortcuts…", "help.show_shortcuts", "F1"),
            Action("first_steps", "&First steps", "help.show_first_steps"),
        ),
    ),
)


def build_menus(
    window: QMainWindow,
    undo_stack: QUndoStack,
    dock_toggles: Sequence[QAction],
    menus: Sequence[Menu] = MENUS,
) -> dict[str, QAction]:
    """Add ``menus`` to ``window``'s menu bar; returns the actions by key.

    Every keyed action is also added to the window itself, so its shortcut works while
    the menu bar is hidden or another widget has focus.
    """
    actions: dict[str, QAction] = {}
    bar = window.menuBar()
    for spec in menus:
        menu = bar.addMenu(spec.title)
        for row in spec.rows:
            if isinstance(row, Separator):
                menu.addSeparator()
            elif isinstance(row, Submenu):
                submenu = attrgetter(row.menu)(window)
                if not isinstance(submenu, QMenu):
                    raise TypeError(f"{row.menu} is not a QMenu")
                menu.addMenu(submenu)
            elif isinstance(row, DockToggles):
                for toggle in dock_toggles:
                    menu.addAction(toggle)
            else:
                if row.key in actions:
                    raise ValueError(f"two menu actions are keyed {row.key!r}")
                act = _action(window, undo_stack, row)
                actions[row.key] = act
                menu.addAction(act)
                window.addAction(act)
    return actions


def _action(window: QMainWindow, undo_stack: QUndoStack, row: Action | UndoAction) -> QAction:
    if isinstance(row, UndoAction):
        make = undo_stack.createRedoAction if row.redo else undo_stack.createUndoAction
        act = make(window, row.text)
    else:
        act = QAction(row.text, window)
        handler: Callable[..., Any] = attrgetter(row.handler)(window)
        if row.checkable:
            act.setCheckable(True)
            if row.checked is not None:
                act.setChecked(bool(attrgetter(row.checked)(window)))
            act.triggered.connect(handler)
        else:
            # QAction passes its checked state to slots that accept an argument; handlers
            # such as graph.back(levels=1) must not receive it.
            act.triggered.connect(lambda: handler(*row.args))
    _set_shortcut(act, row.shortcut)
    return act


def _set_shortcut(act: QAction, shortcut: Shortcut | tuple[Shortcut, ...]) -> None:
    if isinstance(shortcut, tuple):
        if shortcut:
            act.setShortcuts([QKeySequence(s) for s in shortcut])
    elif isinstance(shortcut, str):
        act.setShortcut(QKeySequence(shortcut))
    else:
        act.setShortcut(shortcut)
