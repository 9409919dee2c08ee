"""``run_gui`` without a display says so in one line and returns 2 instead of aborting."""

import sys

from shardscope.app.window.launch import run_gui


def test_no_display_returns_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    assert run_gui("example:mlp") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("no display:")
    assert "ssh -X" in err[0] and "render" in err[0]
