"""Persistent GUI settings: window layout, theme, recent files (QSettings).

Tests point ``SHARDSCOPE_SETTINGS`` at a temporary ini file so they never touch the
user's settings.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT = 10


class Settings:
    """Typed access to the few settings the app keeps."""

    def __init__(self, path: str | None = None) -> None:
        path = path or os.environ.get("SHARDSCOPE_SETTINGS")
        if path:
            self.qsettings = QSettings(path, QSettings.Format.IniFormat)
        else:
            self.qsettings = QSettings("shardscope", "shardscope")

    def recent(self) -> list[str]:
        """Recently opened programs and sessions, newest first."""
        value = self.qsettings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in value or []]

    def add_recent(self, item: str) -> list[str]:
        items = [item] + [r for r in self.recent() if r != item]
        items = items[:MAX_RECENT]
        self.qsettings.setValue("recent", items)
        return items

    def theme(self) -> str:
        return str(self.qsettings.value("theme", "dark"))

    def set_theme(self, name: str) -> None:
        self.qsettings.setValue("theme", name)

    def window_state(self) -> tuple[QByteArray | None, QByteArray | None]:
        """Saved (geometry, dock state), or Nones."""
        return self.qsettings.value("geometry"), self.qsettings.value("state")

    def save_window_state(self, geometry: QByteArray, state: QByteArray) -> None:
        self.qsettings.setValue("geometry", geometry)
        self.qsettings.setValue("state", state)

    def forget_dock_state(self) -> None:
        """Drop the saved dock arrangement (the window's geometry stays): the next window
        opens with the default layout."""
        self.qsettings.remove("state")

    def auto_propagate(self) -> bool:
        return str(self.qsettings.value("auto_propagate", "true")).lower() == "true"

    def set_auto_propagate(self, on: bool) -> None:
        self.qsettings.setValue("auto_propagate", "true" if on else "false")

    def hardware(self, default: str) -> str:
        """The hardware profile the Collectives dock prices for (``default`` if never
        chosen)."""
        value = self.qsettings.value("hardware")
        return str(value) if value else default

    def set_hardware(self, name: str) -> None:
        self.qsettings.setValue("hardware", name)

    def first_run_hint_shown(self) -> bool:
        return str(self.qsettings.value("first_run_hint_shown", "false")).lower() == "true"

    def set_first_run_hint_shown(self) -> None:
        self.qsettings.setValue("first_run_hint_shown", "true")

    def sync(self) -> None:
        self.qsettings.sync()
