"""Everything a user's command started, however it left the command's process group.

A process the command starts in a session or group of its own (``os.setsid()``,
``subprocess.Popen(..., start_new_session=True)``) escapes the group kill that ends a
worker, and has no parent-death signal. Two nets find such processes:

- a marker in the environment (``MARKER_ENV``, one value per command), which every
  process the command starts inherits unless it is given an environment of its own: on
  Linux ``/proc/PID/environ`` shows it;
- this process as a child subreaper (``subreaper``, Linux's ``PR_SET_CHILD_SUBREAPER``)
  while the command runs, so that a process of the command whose parent ended is handed
  to this process rather than to init: it is then a child of ours that was not one when
  the command started.

``end_tree`` kills what either net finds until nothing is left, and reaps what was handed
to us. A shardscope worker's relay and the fork server (``relay``, ``forkserver``) are
subreapers for the jobs they run, each job marked with a value of its own; the process
that starts jobs (the CLI, the window) is not one, and ends a job's leftovers by its
marker alone. Where there is no ``/proc`` or no ``prctl`` the nets find nothing and only the
process group is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

# Set in the environment of a user's command, to a value of its own (``new_marker``).
MARKER_ENV = "SHARDSCOPE_COMMAND_TREE"

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
# Rounds of ``end_tree``: each kills what it finds, so that what they forked meanwhile is
# found by the next; a command that forks faster than that is stopped by the process limit.
_ROUNDS = 50


def new_marker() -> str:
    """A value for ``MARKER_ENV`` that no other command has."""
    return uuid.uuid4().hex


def marked(marker: str) -> list[int]:
    """The processes (not zombies) whose environment holds ``MARKER_ENV=marker``; none
    where ``/proc`` cannot tell."""
    needle = f"{MARKER_ENV}={marker}".encode()
    found = []
    for pid in _pids():
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0") and _state(pid) not in (None, "Z", "X"):
            found.append(pid)
    return found


def children() -> set[int]:
    """This process's children, zombies too; none where ``/proc`` cannot tell."""
    me = os.getpid()
    return {pid for pid in _pids() if _parent(pid) == me}


@contextlib.contextmanager
def subreaper() -> Iterator[bool]:
    """While the block runs, processes whose parent ends are handed to this one (where
    Linux lets us: yields whether it did); afterwards as before."""
    prctl = _prctl()
    before = ctypes.c_int(0)
    if prctl is None or prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(before), 0, 0, 0) != 0:
        yield False
        return
    if prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        yield False
        return
    try:
        yield True
    finally:
        prctl(_PR_SET_CHILD_SUBREAPER, before.value, 0, 0, 0)


def end_tree(marker: str | None, keep: set[int] | None) -> list[int]:
    """Kill every process ``marked`` with ``marker`` and every child of ours not in
    ``keep`` (those handed to us by ``subreaper``), round after round until none is
    left, reaping the children; the pids killed. ``keep`` None: the marker alone (in a
    process whose children are not the command's to end: one that runs other commands
    meanwhile); ``marker`` None: the children alone."""
    killed: list[int] = []
    for _ in range(_ROUNDS):
        handed = children() - keep if keep is not None else set()
        found = (set(marked(marker) if marker else ()) | handed) - {os.getpid()}
        alive = [pid for pid in found if _state(pid) not in (None, "Z", "X")]
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        # One killed a moment ago may not be dead yet: it is killed again, listed once.
        killed.extend(pid for pid in alive if pid not in killed)
        for pid in handed:
            _reap(pid)
        if not alive:
            break
    return killed


def end_group(group: int, spare: int) -> bool:
    """Kill every process of process group ``group`` but ``spare``, round after round
    until none is left; False where ``/proc`` cannot tell the members (nothing killed)."""
    if not os.path.isdir("/proc/self"):
        return False
    for _ in range(_ROUNDS):
        members = [pid for pid in _pids() if pid != spare and _group(pid) == group]
        alive = [pid for pid in members if _state(pid) not in (None, "Z", "X")]
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if not alive:
            break
    return True


def _reap(pid: int) -> None:
    """Reap child ``pid`` once it has ended (it was just killed: at most a moment)."""
    deadline = time.monotonic() + 1.0
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() > deadline:
            return
        time.sleep(0.001)


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the name (which may hold spaces): state,
    parent, ...; None when it is gone or unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def _parent(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _group(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[2]) if fields else None
