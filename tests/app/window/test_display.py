"""Whether a window can open: no display, a display nobody answers on, missing X libraries."""

import socket
import sys

import pytest

import shardscope.app.window.display as display_module
from shardscope.app.window.display import display_problem, remote_display


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
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(display_module.ctypes.util, "find_library", lambda name: f"lib{name}.so")
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
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(
        display_module.ctypes.util,
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


def test_every_xcb_library_qt_needs_names_its_package(monkeypatch):
    # Without libxcb-keysyms Qt's xcb plugin fails to load and aborts with its own message.
    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    missing = {"xcb-keysyms", "xcb-shape", "xcb-render-util", "xcb-image"}
    monkeypatch.setattr(
        display_module.ctypes.util,
        "find_library",
        lambda name: None if name in missing else f"lib{name}.so",
    )
    server, display = _fake_x_server()
    with server:
        monkeypatch.setenv("DISPLAY", display)
        problem = display_problem()
    assert problem.endswith(
        "sudo apt-get install libxcb-keysyms1 libxcb-shape0 libxcb-render-util0 libxcb-image0"
    )


@pytest.mark.parametrize(
    ("env", "remote"),
    [
        ({"SSH_CONNECTION": "10.0.0.2 51234 10.0.0.9 22", "DISPLAY": "localhost:10.0"}, True),
        ({"DISPLAY": "tpu-vm:10.0"}, True),
        ({"DISPLAY": "10.1.2.3:0"}, True),
        ({"DISPLAY": ":0"}, False),
        ({"DISPLAY": ":1.0"}, False),
        ({"DISPLAY": "unix:0"}, False),
        ({"DISPLAY": "/tmp/launch-abc/org.xquartz:0"}, False),
        ({}, False),
        # drawn off screen: nothing travels, whatever else is set
        ({"SSH_CONNECTION": "a b c d", "QT_QPA_PLATFORM": "offscreen"}, False),
    ],
)
def test_a_display_is_remote_over_ssh_or_when_it_names_a_host(env, remote):
    reason = remote_display(env)
    assert (reason is not None) == remote
    if "SSH_CONNECTION" in env and remote:
        assert "SSH_CONNECTION" in reason
    elif remote:
        assert env["DISPLAY"] in reason
