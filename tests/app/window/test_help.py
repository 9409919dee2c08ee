"""Help: a shortcuts dialog built from the window's actions, a first-run hint shown once."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog

from shardscope.app.window.help import ShortcutsDialog, plain
from shardscope.app.window.main_window import MainWindow
from shardscope.app.window.settings import Settings


def test_help_lists_every_shortcut_the_window_has_by_menu(make_window, pick, qtbot):
    window = make_window(None, propagate=False)
    pick(window, "&Help", "&Keyboard shortcuts…")
    dialog = window.findChild(QDialog, "shortcuts_dialog")
    assert isinstance(dialog, ShortcutsDialog) and dialog.isVisible()
    rows = dialog.texts()
    native = QKeySequence.SequenceFormat.NativeText
    assert ("F5", "Propagate now", "Propagation") in rows
    assert ("Ctrl+Shift+A", "Expand all scopes", "View") in rows
    assert ("Ctrl+Shift+D", "Side by side", "View") in rows
    # Esc cancels whichever long task shows in the status bar: one row names both
    timeline_esc = "Timeline: final state (leave step mode)"
    assert (
        "Esc",
        f"Cancel expand/collapse all or the run; {timeline_esc}",
        "window; Timeline dock and graph (while stepping)",
    ) in rows
    assert ("Ctrl+=, Ctrl++", "Zoom in", "View") in rows
    assert (QKeySequence(QKeySequence.StandardKey.Find).toString(native), "Find", "Edit") in rows
    assert ("F1", "Keyboard shortcuts", "Help") in rows
    # every menu action with a shortcut is listed, with the keys it really has
    listed = {row[1] for row in rows}
    for action in window.menu_actions.values():
        if action.shortcuts():
            assert plain(action.text()) in listed, action.text()
    dialog.close()

    # an action added later (by a dock, say) is listed the next time: nothing goes stale
    extra = QAction("Step forward", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+Right"))
    window.addAction(extra)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.graph, Qt.Key.Key_F1)
    dialog = window.help.dialog
    assert ("Ctrl+Alt+Right", "Step forward", "window") in dialog.texts()


def test_help_lists_every_key_the_timeline_binds(make_window, qtbot):
    from shardscope.viewers.timeline.timeline_panel import KEY_ACTIONS, PANEL_KEYS, STEP_KEYS

    window = make_window("example:mlp")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.graph, Qt.Key.Key_F1)
    rows = window.help.dialog.texts()
    native = QKeySequence.SequenceFormat.NativeText
    by_key = {keys: (action, where) for keys, action, where in rows}
    # every binding of the timeline's key table, under the name its button's tip gives
    assert set(PANEL_KEYS) > set(STEP_KEYS)
    for key, action in PANEL_KEYS.items():
        name = QKeySequence(key).toString(native)
        assert name in by_key, name
        text, where = by_key[name]
        assert f"Timeline: {KEY_ACTIONS[action].lower()}" in text
        assert "graph" in where
        assert ("while stepping" in where) == (key not in STEP_KEYS)
    assert by_key["Space"] == ("Timeline: play / pause", "Timeline dock and graph")
    assert by_key["End"] == ("Timeline: last step", "Timeline dock and graph")
    panel = window.timeline.panel
    assert panel.end_button.toolTip() == "Last step (End)"
    assert panel.play_button.toolTip() == "Play / pause (Space)"
    # and the keys listed really do it, on the graph
    pb = window.timeline.playback
    window.graph.setFocus()
    qtbot.keyClick(window.graph, Qt.Key.Key_End)
    assert pb.at_end
    qtbot.keyClick(window.graph, Qt.Key.Key_Home)
    assert pb.position == 0
    window.help.dialog.close()


def test_the_first_run_hint_shows_once_and_again_from_the_help_menu(make_window, pick, qtbot):
    window = make_window(None, propagate=False)
    hint = window.help.hint
    assert hint is not None and hint.isVisible()
    text = hint.label.text()
    assert "Open example" in text and "Ctrl+Shift+E" in text and "Spec palette" in text
    assert "F1" in text and "F5" in text and "axis:model" in text
    # it sits above the graph, not over it
    assert hint.geometry().bottom() < window.graph.geometry().top()
    qtbot.mouseClick(hint.close_button, Qt.MouseButton.LeftButton)
    assert not hint.isVisible()
    window.settings.sync()

    second = make_window(None, propagate=False)  # the next start, same settings file
    assert second.help.hint is None
    pick(second, "&Help", "&First steps")
    assert second.help.hint is not None and second.help.hint.isVisible()
    assert Settings().first_run_hint_shown()


def test_a_fresh_settings_file_means_a_first_run(tmp_path, qtbot, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "fresh.ini"))
    assert not Settings().first_run_hint_shown()
    window = MainWindow(auto_propagate=False)
    qtbot.addWidget(window)
    assert window.help.hint is not None
    assert Settings().first_run_hint_shown()
    window.close()


def test_help_says_a_drop_replaces_and_shift_appends(make_window, pick):
    from PySide6.QtWidgets import QLabel

    window = make_window(None, propagate=False)
    pick(window, "&Help", "&Keyboard shortcuts…")
    dialog = window.findChild(QDialog, "shortcuts_dialog")
    (mouse,) = [w for w in dialog.findChildren(QLabel) if w.text().startswith("Mouse:")]
    assert "replaces the dimension's axes" in mouse.text()
    assert "hold Shift or Ctrl as you drop to append" in mouse.text()
