"""How the run worker words a failure of the program it runs: one line per exception
(``failure_line``: where in the program, and the innermost error), a host callback
of the program that raises, which ends the worker at once (``CallbackFailure``), and why
no unsharded reference could be made of it (``reference_words``)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from shardscope.backend.program.lower import program_line
from shardscope.backend.program.traced_call import SHARD_MAP_BOUND

# Where this worker writes its report (``main``'s ``OUT``), for ``CallbackFailure``.
_REPORT: list[Path] = []


def report_to(path: Path | None) -> None:
    """Have ``CallbackFailure`` write its report to ``path`` (the worker's ``OUT``)."""
    _REPORT[:] = [path] if path is not None else []


# What JAX logs, with the exception, when a host callback of the program raises.
_CALLBACK_FAILED = (
    "jax.pure_callback failed",
    "jax.io_callback failed",
    "jax.debug.callback failed",
)
_CALLBACK_LOGGERS = ("jax._src.callback", "jax._src.debugging")


class CallbackFailure(logging.Handler):
    """Ends the worker at the first host callback of the program that raises, with the
    program's own error as its report.

    JAX logs the callback's exception and hands XLA an error on that device; on the CPU
    the other devices then wait for it at their next collective until XLA's rendezvous
    gives up and aborts the process (60 s on this machine, for a 2-device all-reduce)."""

    def __init__(self, path: str, stop: Callable[[], None]) -> None:
        super().__init__(logging.ERROR)
        self.path, self.stop = path, stop

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() not in _CALLBACK_FAILED or not record.exc_info:
            return
        exc = record.exc_info[1]
        if exc is None or not _REPORT:
            return
        report = {"ok": False, "error": failure_line(self.path, exc)}
        part = _REPORT[0].with_suffix(".part")
        part.write_text(json.dumps(report))
        os.replace(part, _REPORT[0])
        with contextlib.suppress(Exception):
            self.stop()
        sys.stderr.flush()
        os._exit(0)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """While the block runs, the callbacks' loggers report here."""
        loggers = [logging.getLogger(name) for name in _CALLBACK_LOGGERS]
        for logger in loggers:
            logger.addHandler(self)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeHandler(self)


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


_LAST = re.compile(r"^(?:[\w.]+\.)?(?P<type>\w*(?:Error|Exception|Interrupt))\b:?\s*(?P<msg>.*)$")


def failure_line(path: str, exc: BaseException) -> str:
    """One line for an exception raised while compiling or running the program at
    ``path``: where in the program (the last frame in its file, from the traceback or
    from a traceback quoted in the message, as JAX quotes a failed host callback), and
    the innermost error."""
    line = program_line(path, exc)
    text = str(exc).strip()
    for m in _FRAME.finditer(text):
        if m["file"] == path:
            line = int(m["line"])
    detail = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")
    lines = [raw.strip() for raw in text.splitlines() if raw.strip()]
    if len(lines) > 1:
        m = _LAST.match(lines[-1])
        if m:
            detail = lines[-1]
    where = f"{path}:{line}" if line else path
    if len(detail) > 300:
        detail = detail[:300] + "..."
    return f"{where}: the run failed: {detail}; fix the program and run it again"


RUN_FAILED = "the run failed"


def run_failed(message: str) -> str:
    """``the run failed: MESSAGE``, said once: a ``failure_line`` (``prog.py:5: the run
    failed: ...``) or a host's (``host 1 of 2: prog.py:5: the run failed: ...``) loses
    its own ``the run failed``."""
    text = message.strip()
    if text.lower().startswith(RUN_FAILED):
        return RUN_FAILED + text[len(RUN_FAILED) :]
    return f"{RUN_FAILED}: {text.replace(f': {RUN_FAILED}: ', ': ', 1)}"


# Where JAX and jaxlib keep their code: an exception raised there is JAX's own.
_JAX_DIRS = tuple(f"{os.sep}{name}{os.sep}" for name in ("jax", "jaxlib", "jax_plugins"))
# The note JAX adds where it took its own frames out of a traceback
# (``jax_traceback_filtering``): who raised it can no longer be told.
_FILTERED = "JAX has removed its internal frames"


def _raised_by_jax(exc: BaseException) -> bool:
    """Whether JAX raised ``exc`` (its innermost frame in JAX's code), or might have (JAX
    took its frames out of the traceback), rather than the program's own code."""
    if any(_FILTERED in str(note) for note in getattr(exc, "__notes__", ()) or ()):
        return True
    frames = list(traceback.walk_tb(exc.__traceback__))
    if not frames:
        return False
    inner = frames[-1][0].f_code.co_filename
    return any(part in inner for part in _JAX_DIRS)


def shard_map_kept_mesh(path: str, exc: BaseException, mesh: str) -> str | None:
    """The one line for a program whose shard_map without mesh= refuses the run's mesh
    (``mesh``, described) because the load traced it first on another (JAX's shard_map
    keeps the context mesh of its first call: ``traced_call.trace_on_mesh``); None for
    any other ``exc``."""
    if SHARD_MAP_BOUND not in str(exc):
        return None
    line = program_line(path, exc)
    where = f"{path}:{line}" if line else path
    return (
        f"{where}: this shard_map takes the mesh in context once, at its first call, and "
        f"keeps it: it was traced first on the program's MESH, so it cannot run on "
        f"{mesh}; run on the program's MESH (leave out --mesh), or make the shard_map "
        f"inside the function that calls it"
    )


def reference_words(exc: BaseException, path: str | None = None) -> str:
    """Why no reference could be made of the program at ``path`` that raised ``exc``, in
    words, with the fix. The exception's kind is not named; what it says is given (its
    first line) only where the program's own code raised it: JAX's text (a mesh's
    ``repr``, an internal op's name) is left out, and the line of the program it stopped
    at is named instead."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if _raised_by_jax(exc):
        line = program_line(path, exc) if path else None
        text = f"JAX refused line {line} of {os.path.basename(path)}" if line and path else ""
    if len(text) > 160:
        text = text[:157] + "..."
    said = f" ({text})" if text else ""
    return (
        f"the program could not be traced or run unsharded{said}; make it trace on a "
        f"mesh of any size (shard with PartitionSpecs under the mesh in context), or run "
        f"with --no-reference"
    )
