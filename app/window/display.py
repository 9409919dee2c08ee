"""Whether a window can open here, and if not, a one-line reason that says what to do.

Pure Python: the CLI checks this before it starts Qt or the program loader.
"""

from __future__ import annotations

import ctypes.util
import os
import socket
import sys
from collections.abc import Mapping

HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay")


def _platform(env: Mapping[str, str]) -> str:
    """The Qt platform plugin ``QT_QPA_PLATFORM`` names, without its options."""
    return env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()


def remote_display(env: Mapping[str, str]) -> str | None:
    """Why the display looks remote (a short clause), or None when it looks local.

    Headless platforms (``offscreen``) draw nothing that travels, whatever else is set.
    """
    if _platform(env) in HEADLESS_PLATFORMS:
        return None
    if env.get("SSH_CONNECTION", "").strip():
        return "SSH_CONNECTION is set (this session runs over ssh)"
    display = env.get("DISPLAY", "").strip()
    host = display.rpartition(":")[0] if ":" in display else ""
    if host and host != "unix" and not host.startswith("/"):
        return f"DISPLAY={display} names a host"
    return None


def display_problem() -> str | None:
    """Why no window can be opened here, or None when one can."""
    platform = _platform(os.environ)
    if platform in HEADLESS_PLATFORMS or not sys.platform.startswith("linux"):
        return None
    if os.environ.get("WAYLAND_DISPLAY") and platform in ("", "wayland"):
        return None
    display = os.environ.get("DISPLAY")
    if not display:
        return (
            "no display: neither DISPLAY nor WAYLAND_DISPLAY is set; set DISPLAY, use ssh -X, "
            "or run `python main.py render PROGRAM --view graph --out graph.png` for pictures"
        )
    if not _x_server_answers(display):
        return (
            f"no display: nothing answers on DISPLAY={display}; start the X server or "
            f"reconnect with ssh -X, or use `python main.py render` for pictures"
        )
    missing = [lib for lib in _XCB_LIBS if ctypes.util.find_library(lib) is None]
    if missing:
        return (
            f"Qt cannot open an X11 window: missing system libraries ({', '.join(missing)}); "
            f"install them with: sudo apt-get install {' '.join(_XCB_LIBS[lib] for lib in missing)}"
        )
    return None


# Libraries Qt's xcb platform plugin loads that minimal installs lack, with their packages
# (the xcb ones are what PySide6's libQt6XcbQpa lists as NEEDED).
_XCB_LIBS = {
    "xcb-cursor": "libxcb-cursor0",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-shape": "libxcb-shape0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-image": "libxcb-image0",
    "EGL": "libegl1",
    "fontconfig": "libfontconfig1",
}


def _x_server_answers(display: str) -> bool:
    """Whether an X server listens where DISPLAY points (local socket or TCP 6000+n)."""
    host, _, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not number.isdigit():
        return True  # an unusual DISPLAY form: let Qt judge it
    try:
        if host in ("", "unix") or host.startswith("/"):
            path = f"/tmp/.X11-unix/X{number}"
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect(path)
        else:
            with socket.create_connection((host, 6000 + int(number)), timeout=2):
                pass
    except OSError:
        return False
    return True
