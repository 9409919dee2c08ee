"""A warm worker process: jax imported once, one fork per job.

Starting a Python process and importing jax costs more than most jobs a worker does (lowering
a program, say). The fork server is a child process that imports jax, and whatever else
its client names, once; then, for each ``WorkerJob``, it forks a grandchild that runs the
job's worker module as ``python -m MODULE ARG...`` would (its ``main(argv)``, in the job's
folder) and exits. The grandchild is as isolated as a fresh process: a job that raises,
hangs (the client kills it by pid) or crashes only takes the grandchild down, and nothing
it imports leaks into the next job.

Protocol, one JSON object per line: the client writes ``{"module", "argv", "cwd", "log",
"log_stdout", "marker"}`` to the server's stdin; the server answers ``{"pid": N}`` when the
grandchild started and ``{"pid": N, "status": S}`` (``os.waitpid`` status) when it ended.
The server exits when its stdin closes, so it never outlives its client.

Whatever a job starts ends with the job, in a session of its own or not (``descendants``):
the server is a subreaper, so that what the job's processes leave is handed to it, and
the job's processes carry the job's ``marker`` in their environment; between jobs the
server has no child, so each of its children after a job is that job's.

The server is the parent the job's code sees: a program that kills its parent kills the
server, not the client, which says so (``KilledItsParent``) and starts a new server for
the next job.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

from shardscope.backend.isolation.descendants import (
    MARKER_ENV,
    end_tree,
    new_marker,
    subreaper,
)
from shardscope.backend.isolation.limits import become_worker, memory_limit
from shardscope.backend.isolation.registry import REGISTRY
from shardscope.backend.isolation.relay import KilledItsParent, kill_group
from shardscope.backend.isolation.worker_job import WorkerJob, WorkerTimeout, worker_env

# What every worker of ours imports first, and the bulk of its start-up time.
JAX_MODULES = ("jax", "jax.numpy", "jax.sharding")


# The variable that tells the server its client's pid.
_CLIENT_ENV = "SHARDSCOPE_FORKSERVER_CLIENT"


class ForkServerError(RuntimeError):
    """The fork server itself failed (not the job it was running)."""


class ForkServer:
    """Client side: start the server once, then run one job at a time through it."""

    def __init__(self, preload: Sequence[str] = JAX_MODULES) -> None:
        self.preload = tuple(preload)
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._buffer = b""
        # How the last server that exited ended (``Popen.returncode``), for ``run``.
        self._ended: int | None = None

    def start(self) -> None:
        """Start the server process if it is not running (returns at once)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        self._buffer = b""
        # A process group of its own: a terminal's Ctrl+C goes to its client, which
        # decides what ends (``registry.interrupt``); the server ends when its stdin closes.
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "shardscope.backend.isolation.forkserver", *self.preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=worker_env(extra={_CLIENT_ENV: str(os.getpid())}),
            process_group=0,
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
            self._ended = proc.returncode

    def kill(self) -> None:
        """Kill the server now (its workers die with it: their parent-death signal)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()

    def try_acquire(self) -> bool:
        """Reserve the server for one job; False when another job is using it."""
        return self._lock.acquire(blocking=False)

    def release(self) -> None:
        """Give the server back after ``run``."""
        self._lock.release()

    def run(self, job: WorkerJob, while_waiting: Callable[[], object] | None = None) -> int:
        """Run one job; its exit code (negative: the signal that killed it).

        ``while_waiting`` runs once the job is sent, while the server works on it. Call
        between ``try_acquire`` and ``release``. Raises ``WorkerTimeout`` when the job runs
        past ``job.timeout`` (it is killed first), ``KilledItsParent`` when the job killed
        the server by a signal, ``ForkServerError`` when the server cannot start or dies
        otherwise; the caller then runs the job in a fresh process instead.
        Jobs with their own devices or environment need a fresh process: the server's
        workers share its environment.
        """
        if job.devices is not None or job.env:
            raise ValueError("a fork server job cannot set devices or environment variables")
        group = job.group or REGISTRY.default
        group.refuse_if_cancelled()
        self.start()
        marker = new_marker()
        self._send(job, marker)
        if while_waiting is not None:
            try:
                while_waiting()
            except BaseException:
                self.close()  # the server kills the worker when its stdin closes
                raise
        # Starting the server (importing jax) is not the job's time: wait for it apart.
        started = self._read(timeout=120.0)
        if started is None or "pid" not in started:
            self.close()
            raise ForkServerError("fork server did not start a worker")
        pid = started["pid"]
        since = time.monotonic()
        with group.running(pid, marker) as worker:
            try:
                done = self._read(timeout=job.timeout)
            except ForkServerError:
                kill_group(pid)  # what the job forked: the server can no longer
                end_tree(marker, None)
                if self._ended is not None and self._ended < 0:
                    raise KilledItsParent(-self._ended) from None
                raise
        if done is None:
            kill_group(pid)  # the server made the worker a group leader before answering
            if self._read(timeout=30.0) is None:
                self.close()
            raise WorkerTimeout(job.timeout)
        if worker.killed:
            group.check()
        if time.monotonic() - since > job.timeout:
            # It ended, but after its time: the answer may have waited to be read (this
            # process was not scheduled), and a limit is a limit whichever came first.
            raise WorkerTimeout(job.timeout)
        return os.waitstatus_to_exitcode(done["status"])

    def _send(self, job: WorkerJob, marker: str | None = None) -> None:
        request = {
            "module": job.module,
            "argv": list(job.argv),
            "cwd": str(job.cwd),
            "log": str(job.log),
            "log_stdout": job.log_stdout,
            "marker": marker,
        }
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
        except OSError as exc:
            self.close()
            raise ForkServerError(f"fork server is gone: {exc}") from None

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
    """Start the fork server now, so the first job does not pay for importing jax."""
    _SERVER.start()


def _serve(preload: list[str]) -> int:
    # Importing jax takes seconds, before the server reads its stdin: a client that is
    # gone meanwhile (a command that failed at once) must not leave it importing.
    # The client names itself: by the time this runs it may be gone already.
    client = int(os.environ.pop(_CLIENT_ENV, os.getppid()))
    threading.Thread(target=_end_with_client, args=(client,), daemon=True).start()
    for name in preload:
        importlib.import_module(name)  # the point of the server: import once, fork many
    with subreaper():
        return _serve_jobs()


def _end_with_client(client: int) -> None:
    """End the server at once (with the job it runs) when its client is gone."""
    while os.getppid() == client:
        time.sleep(0.1)
    os._exit(0)


def _serve_jobs() -> int:
    out = sys.stdout.buffer
    limit = memory_limit()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        request = json.loads(line)
        marker = request.get("marker")
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(request, server, limit)
        # Both sides make the worker a group leader, so the group exists whichever runs
        # first, before the client may kill it.
        try:
            os.setpgid(pid, pid)
        except (PermissionError, ProcessLookupError):
            pass  # the child already did, or has already exited
        try:
            out.write(json.dumps({"pid": pid}).encode() + b"\n")
            out.flush()
        except OSError:
            # The client is gone (a killed CLI): the job, and whatever it forks, must go too.
            kill_group(pid)
            os.waitpid(pid, 0)
            end_tree(marker, set())
            return 0
        status = _wait_or_orphaned(pid)
        kill_group(pid)  # whatever the job forked
        end_tree(marker, set())  # what it left in sessions of their own
        if status is None:
            return 0
        try:
            out.write(json.dumps({"pid": pid, "status": status}).encode() + b"\n")
            out.flush()
        except OSError:
            return 0
    return 0


def _wait_or_orphaned(pid: int) -> int | None:
    """Wait for the worker; if the client goes away meanwhile (stdin closes), kill the
    worker and return None, so a hung job never outlives the app that started it."""
    stdin = sys.stdin.buffer.fileno()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        readable, _, _ = select.select([stdin], [], [], 0.1)
        if readable and not os.read(stdin, 1):
            kill_group(pid)
            os.waitpid(pid, 0)
            return None


def _child(request: dict, server: int, limit: int | None) -> None:
    """Run one job in the forked grandchild, as ``python -m`` would in its folder; never
    returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        become_worker(server, limit)
        fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if request["log_stdout"]:
            os.dup2(fd, 1)
        else:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
        os.dup2(fd, 2)
        os.close(fd)
        sys.stdin.close()
        if request.get("marker"):
            os.environ[MARKER_ENV] = request["marker"]
        os.chdir(request["cwd"])
        sys.path[0] = request["cwd"]
        code = importlib.import_module(request["module"]).main(request["argv"])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
