"""``python main.py gui``: without a display it says so in one line, before loading anything."""

import subprocess
import sys
from types import SimpleNamespace

import shardscope.backend.isolation.forkserver
from shardscope.app.cli import gui
from shardscope.app.cli.main import build_parser, main
from tests.support.inputs import REPO

ROOT = REPO


def _no_display(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)


def test_preflight_names_the_missing_display(monkeypatch):
    _no_display(monkeypatch)
    problem = gui.preflight(SimpleNamespace(program="example:mlp"))
    assert problem.startswith("no display:") and "\n" not in problem


def test_preflight_lets_an_offscreen_window_open(monkeypatch):
    _no_display(monkeypatch)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert gui.preflight(SimpleNamespace(program="example:mlp")) is None


def test_gui_opens_the_mlp_example_unless_given_a_program():
    parser = build_parser()
    assert parser.parse_args(["gui"]).program == "example:mlp"
    assert parser.parse_args(["gui", "model.py"]).program == "model.py"


def test_cli_gui_without_display_in_a_fresh_process():
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "main.py", "gui"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("no display:")


def test_gui_checks_the_display_before_starting_the_loader(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    started = []
    monkeypatch.setattr(
        shardscope.backend.isolation.forkserver, "warm_up", lambda: started.append(True)
    )
    assert main(["gui", "example:mlp"]) == 2
    assert started == []
    assert capsys.readouterr().err.startswith("no display:")
