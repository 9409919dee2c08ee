"""The signal connections an object makes, recorded so that closing it undoes them all.

An object that listens to a longer-lived one (a view to its session, a dock to the window's
selection) must disconnect when it goes, or the longer-lived object keeps it alive and
keeps calling it. ``Connections`` keeps the list once: each ``connect`` is recorded, and
``close`` disconnects every one. It works for psygnal signals (the backend's models) and
Qt signals alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Connections:
    """Connections made through ``connect``, undone together by ``close``."""

    def __init__(self) -> None:
        self._made: list[tuple[Any, Callable]] = []

    def connect(self, signal: Any, slot: Callable) -> Callable:
        """Connect ``slot`` to ``signal`` (psygnal or Qt) and remember it; returns
        ``slot``."""
        signal.connect(slot)
        self._made.append((signal, slot))
        return slot

    def close(self) -> None:
        """Disconnect every recorded connection, last made first. A signal whose Qt
        object is already deleted is skipped: its connections went with it."""
        made, self._made = self._made, []
        for signal, slot in reversed(made):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError, ValueError):
                pass

    def __len__(self) -> int:
        return len(self._made)
