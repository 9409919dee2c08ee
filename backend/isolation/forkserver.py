"""A warm worker for loading programs: jax imported once, one fork per program.

Starting a Python process and importing jax costs more than lowering most programs. The
fork server is a child process that imports jax and the lowering worker once, then, for
each request, forks a grandchild that imports the user's program, traces and lowers it
(``shardscope.backend.program.lower``) and exits. The grandchild is as isolated as a fresh process:
a program that raises, hangs (the client kills it by pid) or crashes only takes the
grandchild down, and nothing it imports leaks into the next request.

Protocol, one JSON object per line: the client writes ``{"path", "params", "out", "err",
"cwd"}`` to the server's stdin; the server answers ``{"pid": N}`` when the grandchild
started and ``{"pid": N, "status": S}`` (``os.waitpid`` status) when it ended. The server
exits when its stdin closes, so it never outlives its client.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable

from shardscope.backend.program.lower import worker_env


class ForkServerError(RuntimeError):
    """The fork server itself failed (not the program it was loading)."""


class ForkServer:
    """Client side: start the server once, then run one load at a time through it."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._buffer = b""

    def start(self) -> None:
        """Start the server process if it is not running (returns at once)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        self._buffer = b""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "shardscope.backend.isolation.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=worker_env(),
        )

    def close(self) -> None:
        """Stop the server (it exits when its stdin closes)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()

    def try_acquire(self) -> bool:
        """Reserve the server for one load; False when another load is using it."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        """Give the server back after ``run``."""
        self._lock.release()

    def run(
        self, request: dict, timeout: float, while_waiting: Callable[[], object] | None = None
    ) -> int | None:
        """Run one load; the grandchild's wait status, or None when it timed out (killed).

        ``while_waiting`` runs once the request is sent, while the server works on it.
        Call between ``try_acquire`` and ``release``. Raises ``ForkServerError`` when the
        server cannot start or dies; the caller then loads in a fresh process instead.
        """
        self.start()
        proc = self._proc
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
        except OSError as exc:
            self.close()
            raise ForkServerError(f"fork server is gone: {exc}") from None
        if while_waiting is not None:
            try:
                while_waiting()
            except BaseException:
                self.close()  # the server kills the worker when its stdin closes
                raise
        # Starting the server (importing jax) is not the program's time: wait for it apart.
        started = self._read(timeout=120.0)
        if started is None or "pid" not in started:
            self.close()
            raise ForkServerError("fork server did not start a worker")
        pid = started["pid"]
        done = self._read(timeout=timeout)
        if done is None:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            done = self._read(timeout=30.0)
            if done is None:
                self.close()
            return None
        return done["status"]

    def _read(self, timeout: float) -> dict | None:
        proc = self._proc
        if proc is None:
            return None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                self.close()
                raise ForkServerError("fork server exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)


_SERVER = ForkServer()


def shared_server() -> ForkServer:
    """The process-wide fork server (started on first use or by ``warm_up``)."""
    return _SERVER


def warm_up() -> None:
    """Start the fork server now, so the first load does not pay for importing jax."""
    _SERVER.start()


def _serve() -> int:
    import jax  # noqa: F401 - the point of the server: import once, fork many
    import jax.numpy  # noqa: F401
    from jax.sharding import AbstractMesh  # noqa: F401

    from shardscope.backend.program import lower as program_worker

    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, program_worker)
        out.write(json.dumps({"pid": pid}).encode() + b"\n")
        out.flush()
        status = _wait_or_orphaned(pid)
        if status is None:
            return 0
        out.write(json.dumps({"pid": pid, "status": status}).encode() + b"\n")
        out.flush()
    return 0


def _wait_or_orphaned(pid: int) -> int | None:
    """Wait for the worker; if the client goes away meanwhile (stdin closes), kill the
    worker and return None, so a hung program never outlives the app that loaded it."""
    stdin = sys.stdin.buffer.fileno()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        readable, _, _ = select.select([stdin], [], [], 0.1)
        if readable and not os.read(stdin, 1):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None


def _child(request: dict, program_worker) -> None:
    code = 1
    try:
        _die_with_parent()
        fd = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdin.close()
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]
        code = program_worker.main([request["path"], json.dumps(request["params"]), request["out"]])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _die_with_parent() -> None:
    """Ask Linux to kill this worker if the server dies (the server kills it otherwise)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, 9)


if __name__ == "__main__":
    sys.exit(_serve())
