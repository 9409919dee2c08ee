"""Watching processes from tests: whether one still runs, and waiting for it to end."""

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a killed process its parent has not reaped yet does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone_within(pid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``pid`` to end; whether it did."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
