"""What holds a worker in: its memory limit, its time limit, and dying with its parent.

A worker has a memory limit (``memory_limit``) whose breach is reported as running out of
memory, not as a crash, and dies with the process that started it (Linux's parent-death
signal, ``become_worker``). A time limit is checked once, where a job is described
(``check_timeout``).
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import sys

from shardscope.backend.errors import ShardscopeError

# Gigabytes of memory a worker may allocate; 0 for no limit.
MEMORY_ENV = "SHARDSCOPE_WORKER_MEMORY_GB"
# What the log of a worker that hit its memory limit says (each seen here under an
# RLIMIT_DATA limit): Python's MemoryError, C++'s std::bad_alloc, XLA's allocator ("...
# Out of memory allocating N bytes."), and XLA's CPU client when the stacks of the threads
# it starts no longer fit ("Thread ... creation via pthread_create() failed.").
MEMORY_MARKERS = (
    "MemoryError",
    "std::bad_alloc",
    "RESOURCE_EXHAUSTED: Out of memory",
    "via pthread_create() failed",
)


def memory_limit() -> int | None:
    """The most bytes a worker may allocate; None for no limit.

    ``SHARDSCOPE_WORKER_MEMORY_GB`` sets it (0: no limit); by default it is 80% of this
    machine's memory, so that a runaway job fails with MemoryError before the system's
    out-of-memory killer picks a process, perhaps the app.
    """
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        try:
            gb = float(text)
        except ValueError:
            gb = math.nan
        if not math.isfinite(gb) or gb < 0:
            raise ShardscopeError(
                f"{MEMORY_ENV}={text!r} is not a number of gigabytes: set it to e.g. 16, "
                f"or 0 for no limit"
            )
        return int(gb * 2**30) if gb > 0 else None
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return None
    return max(int(physical * 0.8), 4 * 2**30)


def memory_message(what: str, limit: int | None) -> str:
    """``<what> ran out of memory (limit N GB); ...``: the fix names the setting."""
    if limit is None:
        return f"{what} ran out of memory; free some memory or use a smaller program"
    gb = limit / 2**30
    return (
        f"{what} ran out of memory (limit {gb:.3g} GB); allow more with "
        f"{MEMORY_ENV}={math.ceil(gb * 2):g} (0: no limit)"
    )


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation that failed."""
    return isinstance(exc, MemoryError) or str(exc).startswith(MEMORY_MARKERS[2])


def become_worker(parent: int | None, limit: int | None) -> None:
    """Set up this process as a worker of ``parent``: die with it, and allocate at most
    ``limit`` bytes."""
    _die_with_parent()
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)  # the parent died before we could ask
    if limit is not None:
        import resource

        # RLIMIT_DATA rather than RLIMIT_AS: it counts what is allocated, not the
        # address space that jaxlib and thread stacks reserve without using.
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
        except (ValueError, OSError):
            pass  # a system that will not lower it: the worker runs without a limit


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the thread that started it ends."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)


# A limit past this is no limit; far larger ones overflow the clocks that time a worker.
MAX_TIMEOUT = 7 * 24 * 3600.0


def check_timeout(seconds: float) -> float:
    """``seconds`` if it is a usable time limit (> 0, at most a week); else a one-line
    ``ShardscopeError`` naming the fix."""
    try:
        ok = math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT
    except TypeError:
        ok = False
    if not ok:
        raise ShardscopeError(
            f"a time limit of {seconds!r} s is not a number of seconds above 0 and at most "
            f"a week: give e.g. --timeout 300"
        )
    return seconds
