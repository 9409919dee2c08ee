"""App tests run offscreen, with settings and recovery files in a temporary folder."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """Each test gets its own settings ini and recovery folder."""
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "discard")
