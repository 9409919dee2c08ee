"""The menus: the same entries and shortcuts as always, each built from the table, each
reaching its handler when picked or when its shortcut is pressed."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QUndoStack
from PySide6.QtWidgets import QMainWindow, QMenu

from shardscope.app.window.menus import (
    MENUS,
    SEPARATOR,
    Action,
    DockToggles,
    Menu,
    Submenu,
    UndoAction,
    build_menus,
)

# What the user sees, shortcuts in portable text. Standard keys (Open, Save, Quit, Undo,
# Find) are left to the platform and checked against the table instead.
EXPECTED = {
    "&File": [
        ("&Open program…", "std"),
        ("Open &example…", "Ctrl+Shift+E"),
        ("Open &session…", "Ctrl+Shift+O"),
        ("Open &recent", ""),
        ("&Run source again", "Ctrl+Shift+R"),
        "---",
        ("&Save session", "std"),
        ("Save session &as…", "Ctrl+Shift+S"),
        "---",
        ("Export view as &PNG…", "Ctrl+E"),
        ("Export view as S&VG…", "Ctrl+Shift+X"),
        ("Export propagation a&nimation…", ""),
        "---",
        ("&Quit", "std"),
    ],
    "&Edit": [("&Undo", "std"), ("&Redo", "Ctrl+Shift+Z, Ctrl+Y"), "---", ("&Find…", "std")],
    "&View": [
        ("&Fit to window", "Ctrl+0"),
        ("Show &everything", "Ctrl+Shift+0"),
        ("Zoom &in", "Ctrl+=, Ctrl++"),
        ("Zoom &out", "Ctrl+-"),
        ("&Back (leave region)", "Alt+Left"),
        ("E&xpand all scopes", "Ctrl+Shift+A"),
        ("&Collapse all scopes", "Ctrl+Shift+C"),
        ("Side by si&de", "Ctrl+Shift+D"),
        "---",
        ("Compare with &GSPMD", "Ctrl+Shift+G"),
        ("Badge &legend", ""),
        "---",
        ("Toggle &dark/light theme", "Ctrl+T"),
        "---",
        ("&Reset layout", ""),
        ("Mesh", ""),
        ("Spec palette", ""),
        ("Tensor", ""),
        ("Source", ""),
        ("Messages", ""),
        ("Timeline", ""),
        ("History", ""),
        ("Program", ""),
        ("Conflicts", ""),
        ("Collectives", ""),
        ("GSPMD vs Shardy", ""),
        ("Run", ""),
        ("Provenance", ""),
    ],
    "&Propagation": [
        ("&Propagate now", "F5"),
        ("&Automatic after each edit", ""),
        "---",
        ("&Run on devices", "Ctrl+R"),
    ],
    "&Help": [("&Keyboard shortcuts…", "F1"), ("&First steps", "")],
}


def shown(menu: QMenu) -> list:
    out = []
    for action in menu.actions():
        if action.isSeparator():
            out.append("---")
        else:
            keys = ", ".join(
                k.toString(QKeySequence.SequenceFormat.PortableText) for k in action.shortcuts()
            )
            out.append((action.text(), keys))
    return out


def expected_keys(row) -> list[QKeySequence]:
    keys = row.shortcut if isinstance(row.shortcut, tuple) else (row.shortcut,)
    return [QKeySequence(k) for k in keys if not QKeySequence(k).isEmpty()]


def test_the_menus_show_the_same_entries_and_shortcuts(make_window):
    window = make_window(None, propagate=False)
    bar = [a for a in window.menuBar().actions()]
    assert [a.text() for a in bar] == list(EXPECTED)
    for top in bar:
        seen = shown(top.menu())
        want = EXPECTED[top.text()]
        assert len(seen) == len(want), top.text()
        for got, expected in zip(seen, want, strict=True):
            if expected == "---" or expected[1] != "std":
                assert got == expected
            else:
                assert got[0] == expected[0]


def test_every_table_action_is_in_its_menu_with_its_shortcut(make_window, find_action):
    window = make_window(None, propagate=False)
    for menu in MENUS:
        for row in menu.rows:
            if not isinstance(row, Action | UndoAction):
                continue
            action = find_action(window, menu.title, row.text)
            assert action is window.menu_actions[row.key]
            assert action.shortcuts() == expected_keys(row), row.text
            # shortcuts work without opening the menu: the window itself holds the action
            assert action in window.actions()


def test_view_menu_zooms_the_graph(make_window, pick):
    window = make_window("example:mlp", propagate=False)
    view = window.graph
    scale = view.transform().m11()
    pick(window, "&View", "Zoom &in")
    assert view.transform().m11() == pytest.approx(scale * 1.25)
    pick(window, "&View", "Zoom &out")
    assert view.transform().m11() == pytest.approx(scale)


def test_collapse_all_folds_every_scope(make_window, pick):
    window = make_window("example:mlp", propagate=False)
    pick(window, "&View", "&Collapse all scopes")
    assert {n.label for n in window.graph.layout_.nodes if n.kind == "scope"} == {
        "layer1",
        "layer2",
    }


def test_expand_all_shows_every_scopes_contents_and_collapse_all_folds_them(
    make_window, pick, qtbot
):
    window = make_window("example:transformer?layers=2", propagate=False)
    view = window.graph
    graph = window.session.graph
    assert sum(n.kind == "scope" for n in view.layout_.nodes) > 5  # opens folded
    pick(window, "&View", "E&xpand all scopes")
    layout = view.layout_
    assert not [n.label for n in layout.nodes if n.kind == "scope"]
    shown_ops = {n.op for n in layout.nodes if n.kind == "op"}
    # every op of the frame but the hidden constants has its own node
    frame_ops = [op for op in graph.ops if op.parent is None and op.function == graph.main]
    assert {op.id for op in frame_ops if op.short_name != "constant"} <= shown_ops
    assert {"jvp(layer_1)/attn", "transpose(jvp(layer_0))/mlp"} <= {b.path for b in layout.boxes}
    pick(window, "&View", "&Collapse all scopes")
    assert view.expanded() == frozenset()
    assert not [n for n in view.layout_.nodes if n.kind == "op" and n.scope]
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(
        view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert not [n for n in view.layout_.nodes if n.kind == "scope"]


def test_shortcuts_reach_their_handlers(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    theme = window.theme
    qtbot.keyClick(window.graph, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.theme != theme
    qtbot.keyClick(window.graph, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.graph_panel.find_box.hasFocus()
    qtbot.keyClick(
        window.graph,
        Qt.Key.Key_C,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert window.graph.expanded() == frozenset()


def test_undo_and_redo_shortcuts(make_window, qtbot, drop_axis):
    window = make_window("example:mlp", propagate=False)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    spec = window.session.spec(x)
    undo = window.menu_actions["undo"]
    assert undo.isEnabled() and undo.text().startswith("&Undo")
    qtbot.keyClick(window.graph, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.session.spec(x) != spec
    qtbot.keyClick(window.graph, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert window.session.spec(x) == spec


class Recorder(QMainWindow):
    def __init__(self):
        super().__init__()
        self.calls = []
        self.flag = True
        self.submenu = QMenu("Sub", self)

    def record(self, *args):
        self.calls.append(args)

    def toggle(self, on):
        self.calls.append(("toggled", on))


TABLE = (
    Menu(
        "&Test",
        (
            Action("plain", "Plain", "record", "Ctrl+1"),
            Action("args", "With args", "record", ("Ctrl+2", "Ctrl+3"), args=(7, "x")),
            SEPARATOR,
            Action("check", "Checkable", "toggle", checkable=True, checked="flag"),
            Submenu("submenu"),
            DockToggles(),
        ),
    ),
)


def test_handlers_get_their_args_and_checkable_ones_the_state(qtbot):
    window = Recorder()
    qtbot.addWidget(window)
    actions = build_menus(window, QUndoStack(window), [], TABLE)
    assert set(actions) == {"plain", "args", "check"}
    assert actions["check"].isChecked()
    for key in ("plain", "args", "check"):
        actions[key].trigger()
    assert window.calls == [(), (7, "x"), ("toggled", False)]
    entries = window.menuBar().actions()[0].menu().actions()
    assert [a.text() for a in entries] == ["Plain", "With args", "", "Checkable", "Sub"]


def test_a_table_naming_a_missing_handler_fails_when_built(qtbot):
    window = Recorder()
    qtbot.addWidget(window)
    table = (Menu("&Test", (Action("gone", "Gone", "no_such_handler"),)),)
    with pytest.raises(AttributeError):
        build_menus(window, QUndoStack(window), [], table)


def test_two_actions_with_one_key_are_refused(qtbot):
    window = Recorder()
    qtbot.addWidget(window)
    table = (Menu("&Test", (Action("a", "A", "record"), Action("a", "B", "record"))),)
    with pytest.raises(ValueError, match="keyed 'a'"):
        build_menus(window, QUndoStack(window), [], table)
