"""Low-bandwidth mode: drawing for a display forwarded over the network (``ssh -X``).

Over X11 forwarding every repainted pixel crosses the network (4 bytes each, whatever
its colour): what saves bytes is repainting fewer pixels. In this mode the graph is drawn
flat, without antialiasing (boxes are outlines on the background, not filled cards), so
that a zoom or an unfolding changes fewer of the view's blocks; the tile grid outlines its tiles
and colours their labels instead of filling them; busy indicators show their text and
Cancel button without the moving bar. The mode
turns on by itself when the display is remote (``SSH_CONNECTION`` set, or ``DISPLAY``
naming a host), says so in Messages, and is a checkable View menu entry whose choice is
kept in the settings. ``SHARDSCOPE_LOW_BANDWIDTH=1`` (or ``0``) forces it for one run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMainWindow

from shardscope.app.window.busy import StatusBusy
from shardscope.app.window.display import HEADLESS_PLATFORMS

ENV = "SHARDSCOPE_LOW_BANDWIDTH"
MENU_PATH = "View ▸ Low-bandwidth mode"
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")


def remote_display(env: Mapping[str, str]) -> str | None:
    """Why the display looks remote (a short clause), or None when it looks local.

    Headless platforms (``offscreen``) draw nothing that travels, whatever else is set.
    """
    platform = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if platform in HEADLESS_PLATFORMS:
        return None
    if env.get("SSH_CONNECTION", "").strip():
        return "SSH_CONNECTION is set (this session runs over ssh)"
    display = env.get("DISPLAY", "").strip()
    host = display.rpartition(":")[0] if ":" in display else ""
    if host and host != "unix" and not host.startswith("/"):
        return f"DISPLAY={display} names a host"
    return None


def env_choice(env: Mapping[str, str]) -> bool | None:
    """``SHARDSCOPE_LOW_BANDWIDTH`` read as on / off, or None when unset or unreadable."""
    value = env.get(ENV, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    return None


class LowBandwidth(QObject):
    """The mode's state for one window; see the module docstring.

    ``window`` gives the graph view, the settings and Messages. ``changed(on)`` fires
    when the mode flips.
    """

    changed = Signal(bool)

    def __init__(self, window: QMainWindow, env: Mapping[str, str] | None = None) -> None:
        super().__init__(window)
        self.window = window
        env = os.environ if env is None else env
        forced = env_choice(env)
        stored = window.settings.low_bandwidth()
        self.reason: str | None = None
        if forced is not None:
            self.on = forced
            if forced:
                self.reason = f"{ENV}={env.get(ENV)}"
        elif stored is not None:
            self.on = stored
        else:
            self.reason = remote_display(env)
            self.on = self.reason is not None
        if env.get(ENV, "").strip() and forced is None:
            window.messages.add(
                f"{ENV}={env.get(ENV)!r} is neither 1 nor 0: ignored; set it to 1 or 0",
                "warning",
            )
        self._apply()
        if self.on and self.reason:
            window.messages.add(
                f"low-bandwidth mode is on: {self.reason}; the graph and tile grid are "
                f"drawn flat, with fewer pixels to send. Turn it off in {MENU_PATH}"
            )

    def set_on(self, on: bool) -> None:
        """Turn the mode on or off and remember the choice."""
        on = bool(on)
        self.window.settings.set_low_bandwidth(on)
        if on == self.on:
            return
        self.on = on
        self._apply()
        action = getattr(self.window, "menu_actions", {}).get("low_bandwidth")
        if action is not None and action.isChecked() != on:
            action.setChecked(on)
        self.window.statusBar().showMessage(f"low-bandwidth mode {'on' if on else 'off'}", 4000)
        self.changed.emit(on)

    def _apply(self) -> None:
        self.window.graph.set_antialiased(not self.on)
        inspector = getattr(self.window, "inspector", None)
        if inspector is not None:
            inspector.tile_grid.set_flat(self.on)
        # a busy bar with no end known moves all the time it shows: each frame crosses
        # the network, so in this mode its text and Cancel button show without it
        for busy in self.window.findChildren(StatusBusy):
            busy.still = self.on
