"""Running a worker job (``run_worker``) or a user's own command (``run_command``) and
waiting for it, within its time limit and its cancel group.

Every worker runs in a process group of its own that is killed as a whole when the
worker ends, times out or is cancelled (so nothing a user's program forks outlives the
job), under a relay (``relay``) that ends what the worker left in sessions of their own.
A worker that runs past its limit is killed (``WorkerTimeout``); one that dies without
its result is described by ``Crash``.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from shardscope.backend.isolation.descendants import (
    MARKER_ENV,
    children,
    end_group,
    end_tree,
    new_marker,
    subreaper,
)
from shardscope.backend.isolation.fork import ForkedWorker
from shardscope.backend.isolation.limits import check_timeout, memory_limit
from shardscope.backend.isolation.registry import REGISTRY, CancelGroup, RunningWorker
from shardscope.backend.isolation.relay import kill_group, relay_pipe, relayed_exit
from shardscope.backend.isolation.start import EXEC, LAUNCHER_ENV, PARENT_ENV, RELAY_ENV
from shardscope.backend.isolation.worker_job import FirstStage, WorkerJob, WorkerTimeout


def run_command(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    output: int | None = None,
    group: CancelGroup | None = None,
) -> int:
    """Run a user's own command (not a module of ours) as a worker: it dies with this
    process, runs in its own process group (killed as a whole when it ends or times out),
    under the memory limit, and whatever it started ends with it, in a session of its own
    or not (``descendants``). Its exit code (negative: the signal that killed it);
    ``WorkerTimeout`` past ``timeout`` seconds; ``KilledItsParent`` when it kills the
    process that runs it. Its output goes to file descriptor ``output`` (None: this
    process's stderr, keeping stdout for results). It runs in cancel ``group`` (None: the
    registry's default); ``GroupCancelled`` when that group is cancelled."""
    check_timeout(timeout)
    memory_limit()
    group = group or REGISTRY.default
    group.refuse_if_cancelled()
    marker = new_marker()
    with subreaper():
        before = children()
        env = {**env, MARKER_ENV: marker}
        return _run_marked(argv, env, cwd, timeout, output, group, marker, before)


def _run_marked(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    output: int | None,
    group: CancelGroup,
    marker: str,
    before: set[int],
) -> int:
    """``run_command``'s run of a command marked with ``marker``, ended with all it
    started (``descendants.end_tree``, sparing the children of ours in ``before``)."""
    target = output if output is not None else 2  # file descriptor 2: our stderr
    read, write = relay_pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", EXEC, *argv],
            env={**env, PARENT_ENV: str(os.getpid()), RELAY_ENV: str(write), LAUNCHER_ENV: "1"},
            stdin=subprocess.DEVNULL,
            stdout=target,
            stderr=target,
            cwd=str(cwd),
            process_group=0,
            pass_fds=(write,),
        )
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    try:
        with group.running(proc.pid, marker, relayed=True) as worker:
            code = proc.wait(timeout=timeout)
        return _exit_code(worker, read, code, imported=False)
    except subprocess.TimeoutExpired:
        raise WorkerTimeout(timeout) from None
    finally:
        _end_relayed(proc, marker, before)
        os.close(read)


# Seconds a relay has to end what its killed worker left before it is killed too.
_RELAY_WIND_UP_S = 5.0


def _end_relayed(proc: subprocess.Popen | ForkedWorker, marker: str, keep: set[int] | None) -> None:
    """End a job run under a relay (``split_off_worker``), in its process group, with
    everything it started. A relay still running (a worker timed out or cancelled) is
    spared while the rest of its group is killed, so that it ends what the worker left in
    sessions of their own (it is their subreaper) and exits; then the group goes whole,
    and what carries ``marker`` (``descendants.end_tree``, ``keep`` as there)."""
    if proc.poll() is None and end_group(proc.pid, spare=proc.pid):
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_RELAY_WIND_UP_S)
    kill_group(proc.pid)
    proc.wait()
    end_tree(marker, keep)


def run_worker(job: WorkerJob, while_waiting: Callable[[], object] | None = None) -> int:
    """Run ``job`` in a new process; its exit code (negative: the signal that killed it).

    ``while_waiting`` runs in this thread once the process has started. Raises
    ``WorkerTimeout`` when the worker runs past ``job.timeout`` (it is killed first), and
    ``GroupCancelled`` when the job's cancel group is cancelled (before or while it runs).
    Whatever the worker started is killed with it when it ends, in a session of its own
    or not: its relay is a subreaper, and the job's processes carry a marker of its own
    (``descendants``).
    """
    memory_limit()  # a malformed setting is the user's error, not the worker's crash
    group = job.group or REGISTRY.default
    group.refuse_if_cancelled()
    marker = new_marker()
    read, write = relay_pipe()
    try:
        proc = _start(job, write, read, marker)
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    try:
        with group.running(proc.pid, marker, relayed=True) as worker:
            if while_waiting is not None:
                while_waiting()
            stage = job.first_stage
            if stage is not None:
                _wait_for_stage(proc, stage)
            since = time.monotonic()
            code = wait_exit(proc, job.timeout)
            if time.monotonic() - since > job.timeout:
                # It ended, but its end was seen after its time (this process was busy
                # in ``while_waiting`` or not scheduled): a limit is a limit.
                raise WorkerTimeout(job.timeout)
        return _exit_code(worker, read, code)
    except subprocess.TimeoutExpired:
        raise WorkerTimeout(job.timeout) from None
    finally:
        _end_relayed(proc, marker, None)
        os.close(read)


def _start(job: WorkerJob, report: int, keep: int, marker: str) -> subprocess.Popen | ForkedWorker:
    """Start ``job``'s worker, forked or fresh, under a relay that reports through the pipe
    ``report`` (``keep`` is its read end), its processes marked with ``marker``."""
    if job.fork:
        return ForkedWorker(job, report, keep, marker)
    with job.log.open("w") as log:
        return subprocess.Popen(
            job.command(),
            env={**job.environment(), RELAY_ENV: str(report), MARKER_ENV: marker},
            stdin=subprocess.DEVNULL,
            stdout=log if job.log_stdout else subprocess.DEVNULL,
            stderr=log,
            cwd=str(job.cwd),
            process_group=0,
            pass_fds=(report,),
        )


def _exit_code(worker: RunningWorker, read: int, code: int, *, imported: bool = True) -> int:
    """The exit code of ``worker``, which ended with ``code``: as its relay reported it on
    ``read`` (``relayed_exit``), or ``code`` itself when a cancel killed it;
    ``GroupCancelled`` when its own group was cancelled."""
    if not worker.killed:
        return relayed_exit(read, code, imported=imported)
    worker.group.check()
    return code


def _wait_for_stage(proc: subprocess.Popen | ForkedWorker, stage: FirstStage) -> None:
    """Return once ``stage`` is done or the worker has ended; ``WorkerTimeout`` (with
    ``first_stage``) past the stage's limit."""
    deadline = time.monotonic() + stage.timeout
    while not stage.done.exists():
        left = deadline - time.monotonic()
        if left <= 0:
            raise WorkerTimeout(stage.timeout, first_stage=True)
        try:
            wait_exit(proc, min(left, 0.01))
            return
        except subprocess.TimeoutExpired:
            pass


def wait_pid(pid: int, timeout: float | None) -> int | None:
    """The wait status of child ``pid`` once it ends (reaped), or None once ``timeout``
    seconds have passed (None: no limit) without it being seen to end; then it is not
    reaped, for the caller to kill and reap. The time is looked at before the child, so
    a child that ended while this process was busy past the limit counts as past it
    (whichever came first, a limit is a limit). Woken by the kernel (a pidfd) where Linux
    can, else polling."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        ready = os.pidfd_open(pid)
    except (AttributeError, OSError):
        ready = None
    pause = 0.001
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            if ready is not None:
                select.select([ready], [], [], left)
            else:
                time.sleep(pause if left is None else min(pause, left))
                pause = min(pause * 2, 0.02)
    finally:
        if ready is not None:
            os.close(ready)


def wait_exit(proc: subprocess.Popen | ForkedWorker, timeout: float) -> int:
    """``proc.wait(timeout)``, told of the exit by the kernel (a pidfd) where Linux can:
    ``Popen.wait`` with a timeout polls, sleeping up to 50 ms between looks."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout=timeout)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.wait()
