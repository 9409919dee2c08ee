"""Cancelling a run from another thread (the window's Cancel): ``Cancel``.

Light to import: the window makes one per run before anything of the run is loaded.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.relay import kill_group
from shardscope.backend.isolation.start import CANCEL_FOLDER_ENV


class RunCancelled(ShardscopeError):
    """The run was cancelled (``Cancel``); its worker is gone."""


CANCELLED = "the run was cancelled"


class Cancel:
    """Cancels one ``execute`` from another thread: ``cancel()`` kills its worker's
    process group (the worker, its reference child and Shardy's), at once or, if the
    worker has not started its job yet, as soon as it does; ``execute`` then raises
    ``RunCancelled``."""

    def __init__(self) -> None:
        self.cancelled = False
        self._lock = threading.Lock()
        self._folder: Path | None = None

    def _attach(self, folder: Path) -> dict:
        """The job's entries that let the worker be found and told."""
        with self._lock:
            self._folder = folder
            if self.cancelled:
                raise RunCancelled(CANCELLED)
        return {"pid_file": str(folder / "pid"), "cancel_file": str(folder / "cancel")}

    def worker_env(self, folder: Path) -> dict[str, str]:
        """The environment entry that makes a fresh worker announce itself in ``folder``
        as soon as it starts, before its imports (``start.announce``): ``cancel`` then
        kills it at once, whatever it is doing. ``RunCancelled`` if cancelled already."""
        self._attach(folder)
        return {CANCEL_FOLDER_ENV: str(folder)}

    def cancel(self) -> None:
        """Kill the worker (if it runs); ``execute`` raises ``RunCancelled``."""
        with self._lock:
            self.cancelled = True
            folder = self._folder
        if folder is None:
            return
        # The worker writes its pid, then looks for this file: one of the two sees the other.
        with contextlib.suppress(OSError):
            (folder / "cancel").write_text("")
        with contextlib.suppress(OSError, ValueError):
            kill_group(int((folder / "pid").read_text()))
