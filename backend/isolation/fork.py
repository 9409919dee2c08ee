"""Forking a worker from this process rather than starting a fresh interpreter:
``ForkedWorker``, where ``can_fork`` allows it."""

from __future__ import annotations

import contextlib
import os
import runpy
import subprocess
import sys
import threading
import time
import traceback

from shardscope.backend.isolation.descendants import MARKER_ENV
from shardscope.backend.isolation.limits import become_worker, memory_limit
from shardscope.backend.isolation.relay import split_off_worker
from shardscope.backend.isolation.start import PARENT_ENV, announce
from shardscope.backend.isolation.worker_job import WorkerJob


def can_fork() -> bool:
    """Whether a worker may be forked from this process (``WorkerJob.fork``): it runs one
    thread (a fork copies only the calling one, and locks held by others stay held) and
    has not imported JAX (which reads its environment, the worker's, when imported)."""
    return threading.active_count() == 1 and "jax" not in sys.modules


class ForkedWorker:
    """A worker forked from this process: ``python -m MODULE ARG...`` as ``launch`` runs
    it, in its own process group, dying with this process, under the memory limit, its
    output in the job's log, under a relay that reports through the pipe ``report``
    (``split_off_worker``; ``keep`` is the pipe's other end, which the child closes),
    its environment holding ``descendants``' ``marker``. What ``run_worker`` uses of a
    ``Popen``."""

    def __init__(self, job: WorkerJob, report: int, keep: int, marker: str) -> None:
        self.args = [job.module, *job.argv]
        self.returncode: int | None = None
        env = {**job.environment(), MARKER_ENV: marker}
        log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        # Whatever this process has buffered must not be written twice.
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
            if pid == 0:
                os.close(keep)
                _forked_child(job, env, log, report)
        finally:
            os.close(log)
        self.pid = pid
        # Both sides make the worker a group leader, so the group exists whichever runs
        # first, before this process may kill it.
        with contextlib.suppress(PermissionError, ProcessLookupError):
            os.setpgid(pid, pid)

    def wait(self, timeout: float | None = None) -> int:
        """The exit code (negative: the signal); ``subprocess.TimeoutExpired`` past
        ``timeout`` seconds."""
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            done, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
                return self.returncode
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(0.005)

    def poll(self) -> int | None:
        """The exit code if the worker has ended, else None."""
        try:
            return self.wait(timeout=0)
        except subprocess.TimeoutExpired:
            return None


def _forked_child(job: WorkerJob, env: dict[str, str], log: int, report: int) -> None:
    """Become the worker ``job`` describes (under a relay reporting to ``report``) and run
    its module; never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        parent = env.pop(PARENT_ENV, "")
        os.environ.clear()
        os.environ.update(env)
        become_worker(int(parent) if parent.isdigit() else None, memory_limit())
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(log if job.log_stdout else null, 1)
        os.dup2(log, 2)
        os.close(null)
        split_off_worker(report)
        announce()
        os.chdir(job.cwd)
        sys.argv = [job.module, *job.argv]
        sys.path[0] = str(job.cwd)
        runpy.run_module(job.module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported in the log, as a fresh worker's would be
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
