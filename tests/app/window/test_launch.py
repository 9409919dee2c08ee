"""``gui`` without a display says so in one line and returns 2 instead of aborting."""

import subprocess
import sys
from pathlib import Path

import shardscope.backend.isolation.forkserver
from shardscope.app.cli.main import main
from shardscope.app.window.launch import run_gui
from tests.support.inputs import REPO

ROOT = REPO


def test_no_display_returns_2(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    assert run_gui("example:mlp") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("no display:")
    assert "ssh -X" in err[0] and "render" in err[0]


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


def test_a_command_that_fails_at_once_exits_cleanly_on_one_core():
    # The CLI imports jax in a thread while the command runs; a command that fails before
    # the import ends must still exit with its own code, not abort during shutdown.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    taskset = ["taskset", "-c", "0"] if Path("/usr/bin/taskset").exists() else []
    for _ in range(3):
        proc = subprocess.run(
            [*taskset, sys.executable, "main.py", "load", "/nonexistent/program.py"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("error: /nonexistent/program.py: no such file")
