"""Run compiler work in a forked copy of this process, where a crash cannot reach the caller.

Shardy can crash the whole process (a segfault, an LLVM fatal error) on input it does not
expect, and not always the same way: the smallest known case segfaults in some runs of
the same passes on the same module and not in others. Trying the passes in a child and
then running them here again is therefore not safe; ``run_forked`` runs the work itself
in a forked child and sends its result back pickled, and a child that dies becomes a
``ChildCrashed`` for the caller to handle.

Measured on the 24-layer transformer (16x16 mesh, ``propagate`` 0.57 s warm in-process):
forking costs about 0.06 s; pickling the result 0.08 s and loading it 0.11 s. Sending the
module back as text instead would cost more (printing 0.14 s, parsing 0.10 s) and leave
the readback to do here.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import pickle
import signal
import sys
import tempfile
import warnings
from collections.abc import Callable
from typing import Generic, TypeVar

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.jobs import wait_pid
from shardscope.backend.isolation.worker_job import how_it_ended, last_line

T = TypeVar("T")

# How long the work may run in the child; a child that deadlocked after the fork (a lock
# another thread held) must not hang the caller.
DEFAULT_TIMEOUT = 300.0


class ChildCrashed(Exception):
    """The forked child died without a result: how (signal or status) and its last line."""

    def __init__(self, how: str, last_line: str | None) -> None:
        super().__init__(f"{how} ({last_line})" if last_line else how)
        self.how = how
        self.last_line = last_line


def run_forked(work: Callable[[], T], *, timeout: float = DEFAULT_TIMEOUT) -> T:
    """``work()`` run in a forked child; its return value, or the exception it raised.

    The result and exceptions must pickle. Raises ``ChildCrashed`` when the child dies
    without a result, ``ShardscopeError`` when it runs past ``timeout`` (it is killed).
    """
    return start_forked(work).result(timeout)


class Forked(Generic[T]):
    """``work()`` running in a forked child (``start_forked``): ``result`` waits for it.
    Whatever is not waited for is killed and reaped by ``cancel``."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._out = tempfile.TemporaryFile()
        self._log = tempfile.TemporaryFile()
        with warnings.catch_warnings():
            # JAX warns on every fork once it has a backend; the child runs no JAX code.
            warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
            pid = os.fork()
        if pid == 0:
            _child(work, self._out.fileno(), self._log.fileno())
        self.pid = pid
        self._done = False

    def result(self, timeout: float = DEFAULT_TIMEOUT) -> T:
        """The child's return value, or what it raised (see ``run_forked``)."""
        try:
            status = wait_pid(self.pid, timeout)
            if status is None:  # cancel() below kills and reaps it
                raise ShardscopeError(
                    f"Shardy's propagation did not finish within {timeout:g} s; "
                    f"try a smaller program or a smaller mesh"
                )
            self._done = True
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                self._out.seek(0)
                ok, value = pickle.load(self._out)
                if ok:
                    return value
                raise value
            self._log.seek(0)
            text = self._log.read().decode(errors="replace")
            raise ChildCrashed(how_it_ended(status), last_line(text))
        finally:
            self.cancel()

    def cancel(self) -> None:
        """Kill the child if it still runs, reap it, and drop its files."""
        if not self._done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self._done = True
        self._out.close()
        self._log.close()


def start_forked(work: Callable[[], T]) -> Forked[T]:
    """Start ``work()`` in a forked child and go on; ``Forked.result`` waits for it."""
    return Forked(work)


def _child(work: Callable[[], object], out: int, log: int) -> None:
    """Run ``work`` in the forked child and write ``(ok, value)``; never returns."""
    code = 1
    try:
        if sys.platform.startswith("linux"):
            pr_set_pdeathsig = 1
            ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
        # A crash is an expected way for this child to end: no Python traceback dump.
        faulthandler.disable()
        os.dup2(log, 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            report = (True, work())
        except Exception as exc:  # noqa: BLE001 - handed to the caller as it was raised
            report = (False, exc)
        with os.fdopen(os.dup(out), "wb") as f:
            try:
                pickle.dump(report, f, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
                f.seek(0)
                f.truncate()
                pickle.dump((False, ShardscopeError(f"{type(exc).__name__}: {exc}")), f)
        code = 0
    finally:
        os._exit(code)
