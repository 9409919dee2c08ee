"""A worker's relay: the process between the one that started a job and the worker proper.

A worker's parent is not the process that started the job but a relay between them (the
worker's first process, which forks the worker proper and waits for it): a program that
kills its parent (``os.kill(os.getppid(), ...)``) kills the relay, the worker dies with it,
and the job raises ``KilledItsParent`` instead of taking the app down. The relay reports
the worker's end through a pipe (``relay_pipe``), read by ``relayed_exit``.
"""

from __future__ import annotations

import contextlib
import os
import signal

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.descendants import MARKER_ENV, end_tree, marked, subreaper
from shardscope.backend.isolation.limits import become_worker


class KilledItsParent(ShardscopeError):
    """The code a worker ran signalled the process that ran it (the worker's relay, its
    parent), which died of it; the worker died with it."""

    def __init__(self, signum: int, *, imported: bool = True) -> None:
        self.signum = signum
        self.imported = imported
        super().__init__(self.message("the program"))

    def message(self, program: str) -> str:
        """``<program> killed the process that ran it (SIGKILL to its parent): ...``, naming
        the fix."""
        try:
            name = signal.Signals(self.signum).name
        except ValueError:
            name = f"signal {self.signum}"
        where = (
            "shardscope imports a program file in a process of its own, so code run at import "
            'must not signal os.getppid(); move it under `if __name__ == "__main__":`'
            if self.imported
            else "it runs under a process of shardscope's, which it must not signal: "
            "remove the os.kill of os.getppid()"
        )
        return f"{program} killed the process that ran it ({name} to its parent): {where}"


def relay_pipe() -> tuple[int, int]:
    """A pipe for a worker's relay to report through: (read end, write end)."""
    return os.pipe()


def split_off_worker(report: int) -> None:
    """Fork the worker proper and return in it; this process becomes its relay, the
    parent its code sees, and never returns (``_relay``). ``report`` is the write end of
    a ``relay_pipe`` the relay reports the worker's end through."""
    relay = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(report)
        become_worker(relay, None)  # the memory limit is inherited
        return
    with subreaper():
        _relay(pid, report)


def _relay(pid: int, report: int) -> None:
    """Wait for the worker ``pid``, end what it left (``descendants.end_tree``: this
    process is a subreaper, and the job's processes carry its marker), write its wait
    status to ``report`` and end as it ended: the same exit status or signal. Never
    returns."""
    code = 1
    try:
        _, status = os.waitpid(pid, 0)
        end_tree(os.environ.get(MARKER_ENV), set())
        os.write(report, b"%d\n" % status)
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            _end_by(-code)
    finally:
        os._exit(code if code >= 0 else 128 - code)


def _end_by(signum: int) -> None:
    """End this process by signal ``signum`` (as its worker ended), dumping no core: the
    worker's crash was its own."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signum, signal.SIG_DFL)
    with contextlib.suppress(OSError):
        os.kill(os.getpid(), signum)


def relayed_exit(read: int, returncode: int, *, imported: bool = True) -> int:
    """The worker's exit code, as its relay reported it on the pipe ``read`` once the
    relay ended with ``returncode``. A relay killed by a signal before it reported was
    killed by its worker's code: ``KilledItsParent``."""
    os.set_blocking(read, False)
    try:
        text = os.read(read, 64)
    except BlockingIOError:
        text = b""
    if text.strip():
        return os.waitstatus_to_exitcode(int(text))
    if returncode < 0:
        raise KilledItsParent(-returncode, imported=imported)
    return returncode


def kill_marked(marker: str) -> None:
    """Kill the processes ``marker`` marks (``descendants.marked``), if any are left."""
    for pid in marked(marker):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_group(pid: int) -> None:
    """Kill process group ``pid`` (a worker and whatever it started), if any is left."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
