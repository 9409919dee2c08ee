"""``gui`` without a display says so in one line and returns 2 instead of aborting."""

import subprocess
import sys
from pathlib import Path

from app.gui_main import display_problem, run_gui

ROOT = Path(__file__).resolve().parents[2]


def test_no_display_returns_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    assert run_gui("example:mlp") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("no display:")
    assert "ssh -X" in err[0] and "render" in err[0]


def test_display_or_offscreen_is_fine(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None
    monkeypatch.delenv("QT_QPA_PLATFORM")
    monkeypatch.setenv("DISPLAY", ":0")
    assert display_problem() is None


def test_cli_gui_without_display_in_a_fresh_process():
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "main.py", "gui"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("no display:")
