"""``gui`` without a display says so in one line and returns 2 instead of aborting."""

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from shardscope.app.window.launch import display_problem, run_gui
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


def test_display_or_offscreen_is_fine(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None


def _fake_x_server():
    """A TCP listener where DISPLAY=127.0.0.1:N points (port 6000+N), on loopback only."""
    for number in range(90, 130):
        server = socket.socket()
        try:
            server.bind(("127.0.0.1", 6000 + number))
        except OSError:
            server.close()
            continue
        server.listen(1)
        return server, f"127.0.0.1:{number}"
    pytest.skip("no free X display port on loopback")


def test_display_that_answers_is_fine(monkeypatch):
    import shardscope.app.window.launch as gui_main

    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(gui_main.ctypes.util, "find_library", lambda name: f"lib{name}.so")
    server, display = _fake_x_server()
    with server:
        monkeypatch.setenv("DISPLAY", display)
        assert display_problem() is None


def test_display_nobody_answers(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    server, display = _fake_x_server()
    server.close()
    monkeypatch.setenv("DISPLAY", display)
    problem = display_problem()
    assert problem.startswith(f"no display: nothing answers on DISPLAY={display}")
    assert "ssh -X" in problem


def test_missing_xcb_libraries_name_the_packages(monkeypatch):
    import shardscope.app.window.launch as gui_main

    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(
        gui_main.ctypes.util,
        "find_library",
        lambda name: None if name == "xcb-cursor" else f"lib{name}.so",
    )
    server, display = _fake_x_server()
    with server:
        monkeypatch.setenv("DISPLAY", display)
        problem = display_problem()
    assert problem == (
        "Qt cannot open an X11 window: missing system libraries (xcb-cursor); "
        "install them with: sudo apt-get install libxcb-cursor0"
    )


def test_cli_gui_without_display_in_a_fresh_process():
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "main.py", "gui"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("no display:")


def test_gui_checks_the_display_before_starting_the_loader(monkeypatch, capsys):
    import shardscope.backend.isolation.forkserver
    from shardscope.app.cli.main import main

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
