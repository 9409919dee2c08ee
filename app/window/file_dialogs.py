"""File dialogs that open where the user works: in the last folder used for that kind of
file (``programs``, ``sessions``, ``exports``), kept in the settings, else in the folder
shardscope was started from.

``choose_file`` is the one way the window asks for a path: it opens Qt's file dialog (the
platform's own where it has one) in that folder, a save dialog with the suggested name in
it, and remembers the chosen file's folder for the next dialog of the same kind. Cancel
returns None and remembers nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from shardscope.app.window.settings import Settings

KINDS = ("programs", "sessions", "exports")
_KEY = "folders/{}"

# the folder the user started shardscope from, before anything could change it
START_FOLDER = os.getcwd()


def last_folder(settings: Settings, kind: str) -> str:
    """The folder a ``kind`` dialog opens in: the last one used for ``kind`` if it still
    exists, else the folder shardscope was started from."""
    if kind not in KINDS:
        raise ValueError(f"no file dialog kind {kind!r}: use one of {', '.join(KINDS)}")
    saved = settings.qsettings.value(_KEY.format(kind))
    if saved and Path(str(saved)).is_dir():
        return str(saved)
    return START_FOLDER


def remember_folder(settings: Settings, kind: str, path: str | Path) -> None:
    """Keep the folder of ``path`` (a file chosen in a ``kind`` dialog) for the next one."""
    settings.qsettings.setValue(_KEY.format(kind), str(Path(path).resolve().parent))


def choose_file(
    parent: QWidget | None,
    settings: Settings,
    kind: str,
    caption: str,
    filters: str = "",
    *,
    save_as: str | None = None,
    suffix: str = "",
) -> tuple[str, str] | None:
    """Ask for a file to open (``save_as`` None) or a name to save as (``save_as``: the
    suggested file name) in the ``kind`` dialog's folder; ``(path, chosen filter)``, or
    None if the user cancels. ``suffix`` is added to a saved name that has none."""
    folder = last_folder(settings, kind)
    if save_as is None:
        path, chosen = QFileDialog.getOpenFileName(parent, caption, folder, filters)
    else:
        path, chosen = QFileDialog.getSaveFileName(
            parent, caption, str(Path(folder) / save_as), filters
        )
        if path and suffix and not Path(path).suffix:
            path = f"{path}.{suffix.lstrip('.')}"
    if not path:
        return None
    remember_folder(settings, kind, path)
    return path, chosen
