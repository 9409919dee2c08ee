"""File > Open recent: the files opened or saved last, each reopening as what it is."""


def test_recent_menu_lists_opened_files_and_reopens_them(make_window, qtbot, tmp_path, find_action):
    window = make_window("example:mlp", propagate=False)
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    recent = find_action(window, "&File", "Open &recent").menu()
    assert recent.isEnabled()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]

    fresh = make_window(None, propagate=False)
    recent = find_action(fresh, "&File", "Open &recent").menu()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.session.program is not None, timeout=60_000)
    assert fresh.files.session_path is None
    # the program reopened goes to the top of the list
    assert [a.text() for a in recent.actions()] == ["example:mlp", str(path)]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.files.loading is None, timeout=60_000)
    assert fresh.files.session_path == path
    assert fresh.settings.recent() == [str(path), "example:mlp"]


def test_recent_menu_is_disabled_when_empty(make_window, find_action):
    window = make_window(None, propagate=False)
    recent = find_action(window, "&File", "Open &recent")
    assert recent.menu().actions() == []
    assert not recent.isEnabled()
