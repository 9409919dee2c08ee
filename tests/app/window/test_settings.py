"""Persistent settings: recent files, theme, automatic propagation, window layout."""

import os

from PySide6.QtCore import QByteArray

from shardscope.app.window.settings import MAX_RECENT, Settings


def reopened(settings: Settings) -> Settings:
    """The same settings as the next start of the app reads them."""
    settings.sync()
    return Settings()


def test_settings_live_in_the_file_the_environment_names():
    settings = Settings()
    settings.add_recent("a.py")
    settings.sync()
    assert settings.qsettings.fileName() == os.environ["SHARDSCOPE_SETTINGS"]
    assert "a.py" in open(os.environ["SHARDSCOPE_SETTINGS"]).read()


def test_recent_files_round_trip_newest_first_without_duplicates():
    settings = Settings()
    assert settings.recent() == []
    settings.add_recent("a.py")
    assert reopened(settings).recent() == ["a.py"]
    settings.add_recent("b.mlir")
    assert settings.add_recent("a.py") == ["a.py", "b.mlir"]
    assert reopened(settings).recent() == ["a.py", "b.mlir"]


def test_a_single_recent_file_in_the_ini_reads_as_a_list(tmp_path):
    # QSettings reads a one-item list back from an ini file as a plain string.
    path = tmp_path / "one.ini"
    path.write_text("[General]\nrecent=a.py\n")
    assert Settings(str(path)).recent() == ["a.py"]


def test_recent_files_keep_only_the_newest():
    settings = Settings()
    for i in range(MAX_RECENT + 3):
        settings.add_recent(f"p{i}.py")
    recent = reopened(settings).recent()
    assert len(recent) == MAX_RECENT
    assert recent[0] == f"p{MAX_RECENT + 2}.py" and "p2.py" not in recent


def test_theme_defaults_to_dark_and_round_trips():
    settings = Settings()
    assert settings.theme() == "dark"
    settings.set_theme("light")
    assert reopened(settings).theme() == "light"


def test_automatic_propagation_defaults_on_and_round_trips():
    settings = Settings()
    assert settings.auto_propagate() is True
    settings.set_auto_propagate(False)
    assert reopened(settings).auto_propagate() is False
    settings.set_auto_propagate(True)
    assert reopened(settings).auto_propagate() is True


def test_window_state_is_empty_until_saved():
    settings = Settings()
    assert settings.window_state() == (None, None)
    settings.save_window_state(QByteArray(b"geometry"), QByteArray(b"docks"))
    geometry, state = reopened(settings).window_state()
    assert bytes(geometry) == b"geometry" and bytes(state) == b"docks"


def test_an_explicit_path_wins_over_the_environment(tmp_path):
    path = tmp_path / "other.ini"
    Settings(str(path)).set_theme("light")
    assert Settings().theme() == "dark"
    assert Settings(str(path)).theme() == "light"


def test_the_hardware_picked_for_costs_is_remembered():
    settings = Settings()
    assert settings.hardware("h100") == "h100"
    settings.set_hardware("tpu_v5e")
    assert reopened(settings).hardware("h100") == "tpu_v5e"
