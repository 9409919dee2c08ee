"""Try Shardy's passes on a module in a forked copy of this process before running them here.

Shardy can crash the whole process (a segfault, an LLVM fatal error) on input it does not
expect, and the passes run in the caller's process: the window's or the CLI's. ``probe``
forks, runs the same pass lists on the child's copy of the module and reports how the
child ended; only a clean run lets the caller run them for real. Measured on the 24-layer
transformer (16x16 mesh), the fork and the second run of the passes cost about 0.2 s of
the 0.6 s ``propagate`` takes, less than sending the child's module back as text and
parsing it here (printing 0.14 s, parsing 0.10 s, on top of the same passes).
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError

if TYPE_CHECKING:
    from jaxlib.mlir import ir

    from shardscope.backend.program.mlir import ModuleView

# How long the passes may run in the child; a child that deadlocked after the fork (a lock
# another thread held) must not hang the caller.
DEFAULT_TIMEOUT = 300.0
# The child's exit status when a pass reported an error (the caller then runs the passes
# itself and gets that error as a ``ShardscopeError``).
_REJECTED = 3


@dataclass(frozen=True)
class ProbeCrash:
    """How the child running the passes died: the signal or status, and its last line."""

    how: str
    last_line: str | None

    def describe(self) -> str:
        """``killed by SIGSEGV (LLVM ERROR: ...)``."""
        return f"{self.how} ({self.last_line})" if self.last_line else self.how


def probe(
    module: ir.Module | ModuleView, pipelines: Sequence[str], *, timeout: float = DEFAULT_TIMEOUT
) -> ProbeCrash | None:
    """Run ``pipelines`` in order on a forked copy of ``module``; None when they all ran
    (or one reported an ordinary error), else how the child died.

    Raises ``ShardscopeError`` when the child runs past ``timeout`` (it is killed first).
    ``module`` itself is not changed.
    """
    if not hasattr(os, "fork"):
        return None
    with tempfile.TemporaryFile() as log:
        with warnings.catch_warnings():
            # JAX warns on every fork once it has a backend; the child runs no JAX and
            # nothing on the thread pool (see ``_child``).
            warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
            pid = os.fork()
        if pid == 0:
            _child(module, pipelines, log.fileno())
        status = _wait(pid, timeout)
        log.seek(0)
        text = log.read().decode(errors="replace")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            how = f"killed by {signal.Signals(sig).name}"
        except ValueError:
            how = f"killed by signal {sig}"
    elif os.WEXITSTATUS(status) in (0, _REJECTED):
        return None
    else:
        how = f"exited with status {os.WEXITSTATUS(status)}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return ProbeCrash(how, lines[-1][:200] if lines else None)


def _child(module: ir.Module | ModuleView, pipelines: Sequence[str], log: int) -> None:
    """Run the passes in the forked child; never returns."""
    code = 1
    try:
        if sys.platform.startswith("linux"):
            pr_set_pdeathsig = 1
            ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
        # A crash is the expected way for this child to end: no Python traceback dump.
        faulthandler.disable()
        os.dup2(log, 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        # The context's thread pool has no threads in a forked child: work queued on it
        # would wait forever.
        module.context.enable_multithreading(False)
        # Imported here: the parent imports this module before jaxlib is loaded.
        from shardscope.backend.program.mlir import run_passes

        try:
            for pipeline in pipelines:
                run_passes(module, pipeline)
            code = 0
        except ShardscopeError:
            code = _REJECTED
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> int:
    """The child's wait status; kills it and raises ``ShardscopeError`` past ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise ShardscopeError(
                f"Shardy's propagation did not finish within {timeout:g} s; "
                f"try a smaller program or a smaller mesh"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.02)
