"""Reading and writing the files a command is given or finds, without blocking or losing
anything.

Reading (``read_bytes``, ``read_text``, ``read_json``): the file is opened without
waiting (a FIFO or device opened for reading would wait for a writer, or never end),
anything but a regular file is refused, and so is a file over the limit its kind has,
before any of it is parsed. JSON nested deeper than ``MAX_JSON_DEPTH`` is refused too, so
no reader recurses into it.

Writing (``write_atomic``): only to a regular file or a new path (never over a FIFO,
device, socket or folder), through a temporary file in the same folder that replaces
the target once it is whole, so a reader sees the old file or the new one and a failed
write leaves nothing behind.

Every refusal is one line of ``error`` (a ``ShardscopeError``): the path, what is wrong
with it, and the caller's ``fix``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from shardscope.backend.errors import ShardscopeError, shortened
from shardscope.backend.units import bytes_text

MiB = 2**20
# The limits of each kind of file, far above what shardscope writes (the 24-layer
# transformer lowers to about 1 MiB of module text; torch_xla captures of training steps
# made here are 1 to 2 MiB) and below what would exhaust memory while parsing: a module's
# text (a .mlir file, a module a capture dumped) ...
MAX_MODULE_BYTES = 256 * MiB
# ... a file that holds modules with more (a capture, a session) ...
MAX_CAPTURE_BYTES = 320 * MiB
# ... and what a capture's hook records about the script's run (its functions, syncs).
MAX_RECORD_BYTES = 64 * MiB
# How deep the JSON files shardscope reads nest at most (a session's view, a capture's
# functions); anything deeper was not written by shardscope.
MAX_JSON_DEPTH = 64
# Temporary files of ``write_atomic``: our prefix and the writer's pid.
TEMP_PREFIX = ".shardscope-tmp-"
_OLD_TEMP = re.compile(r".+\.json[a-z0-9_]{8}\.tmp")


def shown_path(path: str | Path) -> str:
    """``path`` as an error quotes it: its end (the file's name) where it is long."""
    return shortened(str(path), 120, keep="tail", quote=False)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, as an error names it."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(
    path: str | Path,
    limit: int,
    fix: str,
    *,
    what: str = "file",
    error: type[ShardscopeError] = ShardscopeError,
    timeout: float | None = None,
    follow_links: bool = True,
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, read within
    ``timeout`` seconds where given (a file on a stalled network mount); ``error`` (one
    line naming ``what`` it is and ending in ``fix``) for anything else, its ``reason``
    the words after the path (``is a pipe (FIFO), not a regular file``). A missing file
    is ``FileNotFoundError``, for callers to whom that is no error. ``follow_links``
    False: a symbolic link is refused too, not followed."""
    deadline = None if timeout is None else time.monotonic() + timeout

    def refused(reason: str) -> ShardscopeError:
        exc = error(f"{what} {shown_path(path)} {reason}; {fix}")
        exc.reason = reason  # type: ignore[attr-defined]
        return exc

    fd = _open(path, follow_links, refused)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refused(f"is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise refused(_too_big(info.st_size, limit))
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise refused(_too_big(size, limit))
            if deadline is not None and time.monotonic() > deadline:
                raise error(
                    f"{what} {shown_path(path)}: reading did not finish within {timeout:g} s; "
                    f"allow more time with --timeout"
                )
        return b"".join(chunks)
    except OSError as exc:
        raise refused(f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def read_head(path: str | Path, size: int) -> bytes | None:
    """The first ``size`` bytes of ``path`` where it is a regular file that can be read,
    None otherwise (a FIFO or device is never read, and opening one does not wait)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _open(path: str | Path, follow_links: bool, refused: Callable[[str], Exception]) -> int:
    """``path`` opened for reading without waiting (a FIFO without a writer opens at
    once); ``refused(reason)`` where it cannot be, FileNotFoundError where it is not."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        with contextlib.suppress(OSError):
            mode = (os.stat if follow_links else os.lstat)(path).st_mode
            if stat.S_ISLNK(mode):
                raise refused("is a symbolic link, not a regular file") from None
            if not stat.S_ISREG(mode):  # a socket cannot be opened
                raise refused(f"is {file_kind(mode)}, not a regular file") from None
        raise refused(f"cannot be read ({exc.strerror})") from None


def _too_big(size: int, limit: int) -> str:
    return f"is {bytes_text(size)}, over the {bytes_text(limit)} it may be"


def read_text(
    path: str | Path,
    limit: int,
    fix: str,
    *,
    what: str = "file",
    error: type[ShardscopeError] = ShardscopeError,
    errors: str = "strict",
) -> str:
    """``read_bytes`` as UTF-8 text; with ``errors="strict"`` a file that is not UTF-8 is
    ``error`` too."""
    data = read_bytes(path, limit, fix, what=what, error=error)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError:
        raise error(f"{what} {shown_path(path)} is not UTF-8 text; {fix}") from None


def read_json(
    path: str | Path,
    limit: int,
    fix: str,
    *,
    what: str = "file",
    error: type[ShardscopeError] = ShardscopeError,
) -> object:
    """The JSON value in the regular file ``path`` (``read_bytes``), checked by
    ``loads``."""
    data = read_bytes(path, limit, fix, what=what, error=error)
    return loads(data, f"{what} {shown_path(path)}", fix, error=error)


def loads(
    data: str | bytes,
    where: str,
    fix: str,
    *,
    error: type[ShardscopeError] = ShardscopeError,
    max_depth: int = MAX_JSON_DEPTH,
) -> object:
    """``json.loads(data)``; ``error`` (``where``: what is wrong; ``fix``) where it is
    not JSON or nests deeper than ``max_depth``."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise error(f"{where} nests deeper than the {max_depth} levels it may; {fix}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where} is not JSON (line {exc.lineno}); {fix}") from None
    except ValueError:  # bytes that are not UTF-8
        raise error(f"{where} is not JSON (not UTF-8 text); {fix}") from None
    if depth(value, max_depth) > max_depth:
        raise error(f"{where} nests deeper than the {max_depth} levels it may; {fix}")
    return value


def depth(value: object, stop: int = MAX_JSON_DEPTH) -> int:
    """How deep lists and objects nest in ``value`` (a number or text is 0), counted
    without recursion up to one past ``stop``."""
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > stop:
            return deepest
        pending.extend((child, level) for child in children)
    return deepest


def check_target(
    path: str | Path, fix: str, *, error: type[ShardscopeError] = ShardscopeError
) -> Path:
    """The file a write to ``path`` replaces (a symbolic link's target): a regular file or
    a new path; ``error`` for a FIFO, device, socket or folder, which a write must leave
    as it is."""
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise error(f"cannot write {shown_path(path)}: {_reason(exc, target)}; {fix}") from None
    if not stat.S_ISREG(mode):
        raise error(
            f"cannot write {shown_path(path)}: it is {file_kind(mode)}, not a regular file; {fix}"
        )
    return target


def write_atomic(
    path: str | Path,
    write: Callable[[IO[bytes]], object],
    fix: str,
    *,
    private: bool = False,
    error: type[ShardscopeError] = ShardscopeError,
) -> None:
    """Write ``path`` with ``write(file)`` atomically: into a temporary file in its folder
    that replaces it once whole. ``check_target`` first (a link's target is replaced, the
    link stays); the folders are made; a replaced file keeps its mode. A failed write
    leaves no temporary file (one left by a killed writer is removed by the next write
    into the folder) and is ``error`` naming why, or the exception ``write`` raised where
    that is not an ``OSError``.

    ``private``: the file is readable by its owner alone (0600) from the moment it is
    made, and a folder made for it is 0700.
    """
    target = check_target(path, fix, error=error)
    try:
        # ``mode`` is the made folder's own; the folders above it are made as usual.
        target.parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        remove_stale_temps(target.parent)
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        # mkstemp makes the file 0600; one that is not private is widened below.
        fd, tmp = tempfile.mkstemp(
            dir=target.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=f"-{target.name}"
        )
    except OSError as exc:
        raise error(f"cannot write {shown_path(path)}: {_reason(exc, target)}; {fix}") from None
    try:
        if not private:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise error(f"cannot write {shown_path(path)}: {_reason(exc, target)}; {fix}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_drawn(
    path: str | Path,
    draw: Callable[[Path], object],
    fix: str,
    *,
    error: type[ShardscopeError] = ShardscopeError,
) -> int:
    """Have ``draw(scratch)`` write a file named like ``path`` (its suffix says its format)
    in a folder of its own, then write those bytes to ``path`` (``write_atomic``): a
    drawing library that writes straight to ``path`` would wait forever on a FIFO, or
    leave half a file where it fails. ``check_target`` first, so nothing is drawn for a
    target that cannot be written. The bytes written; ``error`` where ``draw`` wrote
    nothing or raised ``OSError``."""
    check_target(path, fix, error=error)
    with tempfile.TemporaryDirectory(prefix="shardscope-draw-") as folder:
        scratch = Path(folder) / ("drawn" + Path(path).suffix.lower())
        try:
            draw(scratch)
            data = scratch.read_bytes()
        except OSError as exc:
            raise error(f"cannot draw {shown_path(path)}: {exc}; {fix}") from None
    if not data:
        raise error(f"cannot draw {shown_path(path)}: nothing was drawn; {fix}")
    write_atomic(path, lambda f: f.write(data), fix, error=error)
    return len(data)


def _reason(exc: OSError, target: Path) -> str:
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        return f"{shown_path(parent)} is a file, not a folder"
    return exc.strerror or str(exc)


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs (one we may not signal still runs)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def pid_in(name: str, prefix: str) -> int | None:
    """The pid ``name`` carries after ``prefix`` (``PREFIX1234-...``), or None."""
    head = name[len(prefix) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def remove_stale_temps(folder: Path) -> None:
    """Remove the temporary files that writes by no-longer-running processes left in
    ``folder`` (and, an hour on, those named as saves named them before names carried a
    pid, ``NAME.jsonXXXXXXXX.tmp``)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(TEMP_PREFIX):
            pid = pid_in(name, TEMP_PREFIX)
            if pid is None or pid_alive(pid):
                continue
        elif not (_OLD_TEMP.fullmatch(name) and _older_than(folder / name, 3600)):
            continue
        with contextlib.suppress(OSError):  # another write removed it, or a read-only folder
            (folder / name).unlink()


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return False
