"""Worker processes: how one is started, held to its time limit and reported on when it dies.

A worker is a module of ours run as ``python -m MODULE ARG...``; its ``main(argv)`` does
the work and returns the exit code. ``WorkerJob`` says which module, with what arguments,
in which folder, for how long and on how many fake CPU devices; ``run_worker`` runs it
in a fresh process (the fork server in ``forkserver`` runs the same jobs in a warm one).
A worker that runs past its limit is killed (``WorkerTimeout``); one that dies without
its result is described by ``Crash``: the signal or exit status, and its last line.

Every worker dies with the process that started it (Linux's parent-death signal), runs in
a process group of its own that is killed as a whole when the worker ends or times out
(so nothing a user's program forks outlives the job), and has a memory limit
(``memory_limit``) whose breach is reported as running out of memory, not as a crash.

A worker's parent is not the process that started the job but a relay between them (the
worker's first process, which forks the worker proper and waits for it): a program that
kills its parent (``os.kill(os.getppid(), ...)``) kills the relay, the worker dies with it,
and the job raises ``KilledItsParent`` instead of taking the app down.

A job may time its first stage apart (``FirstStage``: loading a program, say, before
running it): the worker writes a file when the stage ends, and the job's time limit
counts from then.

A JSON worker takes a job file and writes a report file (``{"ok": true, ...}`` or
``{"ok": false, "error": ...}``): ``run_json_worker`` is the parent's side, turning every
way it can fail into a one-line ``ShardscopeError``, ``json_worker_main`` the child's.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.descendants import (
    MARKER_ENV,
    children,
    end_group,
    end_tree,
    marked,
    new_marker,
    subreaper,
)

_DEVICE_COUNT = "xla_force_host_platform_device_count"

# Gigabytes of memory a worker may allocate; 0 for no limit.
MEMORY_ENV = "SHARDSCOPE_WORKER_MEMORY_GB"
# The pid of the process that started a fresh worker, to notice that it died first.
_PARENT_ENV = "SHARDSCOPE_WORKER_PARENT"
# The file descriptor a fresh worker's relay reports the worker's end through (``_relay``).
_RELAY_ENV = "SHARDSCOPE_WORKER_RELAY"
# A folder a canceller (``run.cancel.Cancel``) watches: a worker started with it writes
# its process group's id there as it starts, before its module's imports, and ends at once
# if told to already (``announce``).
CANCEL_FOLDER_ENV = "SHARDSCOPE_CANCEL_FOLDER"
# A niceness a worker takes as it starts (``os.nice``): work in the background, such as
# the window's compile after each edit, yields the processors to the app.
NICE_ENV = "SHARDSCOPE_WORKER_NICE"
# How a fresh worker starts: ``launch`` below, then the worker module.
_LAUNCH = "from shardscope.backend.isolation.jobs import launch; launch()"
# How a user's own command starts (``capture``): ``exec_command`` below, then the command.
_EXEC = "from shardscope.backend.isolation.jobs import exec_command; exec_command()"
# What the log of a worker that hit its memory limit says (each seen here under an
# RLIMIT_DATA limit): Python's MemoryError, C++'s std::bad_alloc, XLA's allocator ("...
# Out of memory allocating N bytes."), and XLA's CPU client when the stacks of the threads
# it starts no longer fit ("Thread ... creation via pthread_create() failed.").
_MEMORY_MARKERS = (
    "MemoryError",
    "std::bad_alloc",
    "RESOURCE_EXHAUSTED: Out of memory",
    "via pthread_create() failed",
)


def memory_limit() -> int | None:
    """The most bytes a worker may allocate; None for no limit.

    ``SHARDSCOPE_WORKER_MEMORY_GB`` sets it (0: no limit); by default it is 80% of this
    machine's memory, so that a runaway job fails with MemoryError before the system's
    out-of-memory killer picks a process, perhaps the app.
    """
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        try:
            gb = float(text)
        except ValueError:
            gb = math.nan
        if not math.isfinite(gb) or gb < 0:
            raise ShardscopeError(
                f"{MEMORY_ENV}={text!r} is not a number of gigabytes: set it to e.g. 16, "
                f"or 0 for no limit"
            )
        return int(gb * 2**30) if gb > 0 else None
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return None
    return max(int(physical * 0.8), 4 * 2**30)


def memory_message(what: str, limit: int | None) -> str:
    """``<what> ran out of memory (limit N GB); ...``: the fix names the setting."""
    if limit is None:
        return f"{what} ran out of memory; free some memory or use a smaller program"
    gb = limit / 2**30
    return (
        f"{what} ran out of memory (limit {gb:.3g} GB); allow more with "
        f"{MEMORY_ENV}={math.ceil(gb * 2):g} (0: no limit)"
    )


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation that failed."""
    return isinstance(exc, MemoryError) or str(exc).startswith(_MEMORY_MARKERS[2])


def become_worker(parent: int | None, limit: int | None) -> None:
    """Set up this process as a worker of ``parent``: die with it, and allocate at most
    ``limit`` bytes."""
    _die_with_parent()
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)  # the parent died before we could ask
    if limit is not None:
        import resource

        # RLIMIT_DATA rather than RLIMIT_AS: it counts what is allocated, not the
        # address space that jaxlib and thread stacks reserve without using.
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
        except (ValueError, OSError):
            pass  # a system that will not lower it: the worker runs without a limit


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the thread that started it ends."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)


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


def launch() -> None:
    """A fresh worker's start: ``python -c _LAUNCH MODULE ARG...`` becomes a worker, then
    runs ``MODULE`` as ``python -m MODULE ARG...`` would (under a relay, when the job
    gave it a pipe to report through)."""
    parent = os.environ.pop(_PARENT_ENV, "")
    report = os.environ.pop(_RELAY_ENV, "")
    become_worker(int(parent) if parent.isdigit() else None, memory_limit())
    if report.isdigit():
        split_off_worker(int(report))
    announce()
    module = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.getcwd()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def announce() -> None:
    """A worker's first acts: take the niceness ``NICE_ENV`` gives, if any; where the
    environment names a canceller's folder (``CANCEL_FOLDER_ENV``), write this process
    group's id to its file ``pid``, then end at once if its file ``cancel`` is there (the
    canceller writes ``cancel`` before it reads ``pid``: one of the two sees the other)."""
    nice = os.environ.pop(NICE_ENV, "")
    if nice.isdigit():
        with contextlib.suppress(OSError):
            os.nice(int(nice))
    folder = os.environ.pop(CANCEL_FOLDER_ENV, "")
    if not folder:
        return
    with contextlib.suppress(OSError):
        # Written whole, then renamed: the canceller never reads half an id.
        part = Path(folder, "pid.part")
        part.write_text(str(os.getpgrp()))
        os.replace(part, Path(folder, "pid"))
    if Path(folder, "cancel").exists():
        os._exit(1)


def exec_command() -> None:
    """A user command's start: ``python -c _EXEC CMD ARG...`` becomes a worker (dies with
    its parent, memory limit), then, under a relay when given a pipe to report through,
    replaces itself with ``CMD ARG...``."""
    parent = os.environ.pop(_PARENT_ENV, "")
    report = os.environ.pop(_RELAY_ENV, "")
    become_worker(int(parent) if parent.isdigit() else None, memory_limit())
    if report.isdigit():
        split_off_worker(int(report))
    argv = sys.argv[1:]
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot run {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(127)


def run_command(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    output: int | None = None,
) -> int:
    """Run a user's own command (not a module of ours) as a worker: it dies with this
    process, runs in its own process group (killed as a whole when it ends or times out),
    under the memory limit, and whatever it started ends with it, in a session of its own
    or not (``descendants``). Its exit code (negative: the signal that killed it);
    ``WorkerTimeout`` past ``timeout`` seconds; ``KilledItsParent`` when it kills the
    process that runs it. Its output goes to file descriptor ``output`` (None: this
    process's stderr, keeping stdout for results)."""
    check_timeout(timeout)
    memory_limit()
    refuse_if_interrupted()
    marker = new_marker()
    with subreaper():
        before = children()
        return _run_marked(argv, {**env, MARKER_ENV: marker}, cwd, timeout, output, marker, before)


def _run_marked(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    output: int | None,
    marker: str,
    before: set[int],
) -> int:
    """``run_command``'s run of a command marked with ``marker``, ended with all it
    started (``descendants.end_tree``, sparing the children of ours in ``before``)."""
    target = output if output is not None else 2  # file descriptor 2: our stderr
    read, write = relay_pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _EXEC, *argv],
            env={**env, _PARENT_ENV: str(os.getpid()), _RELAY_ENV: str(write)},
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
        with cancellable(proc.pid, marker, relayed=True):
            code = proc.wait(timeout=timeout)
            return _relayed_unless_cancelled(proc.pid, read, code, imported=False)
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


def worker_env(
    devices: int | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a shardscope worker process: this one's (so it imports the same
    shardscope), with jax on the CPU unless the caller chose a platform.

    With ``devices``, the worker sees that many fake CPU devices: the platform is the CPU
    whatever the caller chose, and a device count already in ``XLA_FLAGS`` is replaced.
    ``extra`` variables are set last.
    """
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    if devices is not None:
        flags = [f for f in env.get("XLA_FLAGS", "").split() if _DEVICE_COUNT not in f]
        env["XLA_FLAGS"] = " ".join([*flags, f"--{_DEVICE_COUNT}={devices}"])
        env["JAX_PLATFORMS"] = "cpu"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Crash:
    """A worker that ended without its result: its exit code and the last line it wrote."""

    returncode: int
    last_line: str | None
    # Whether its output says an allocation failed (it hit its memory limit).
    out_of_memory: bool = False

    @property
    def how(self) -> str:
        """``was killed by SIGABRT`` or ``exited with status 3``."""
        if self.returncode < 0:
            try:
                return f"was killed by {signal.Signals(-self.returncode).name}"
            except ValueError:
                return f"was killed by signal {-self.returncode}"
        return f"exited with status {self.returncode}"


def last_line(text: str) -> str | None:
    """The last line of ``text`` that is not blank, cut to 200 characters; None if none."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else None


def how_it_ended(status: int) -> str:
    """A child's ``os.waitpid`` status in words: ``killed by SIGABRT``, ``exited with
    status 3``."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(sig).name}"
        except ValueError:
            return f"killed by signal {sig}"
    return f"exited with status {os.WEXITSTATUS(status)}"


# A limit past this is no limit; far larger ones overflow the clocks that time a worker.
MAX_TIMEOUT = 7 * 24 * 3600.0


def check_timeout(seconds: float) -> float:
    """``seconds`` if it is a usable time limit (> 0, at most a week); else a one-line
    ``ShardscopeError`` naming the fix."""
    try:
        ok = math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT
    except TypeError:
        ok = False
    if not ok:
        raise ShardscopeError(
            f"a time limit of {seconds!r} s is not a number of seconds above 0 and at most "
            f"a week: give e.g. --timeout 300"
        )
    return seconds


class WorkerTimeout(Exception):
    """A worker ran past its time limit and was killed."""

    def __init__(self, timeout: float, *, first_stage: bool = False) -> None:
        super().__init__(f"did not finish within {timeout:g} s")
        self.timeout = timeout
        # True when the worker ran past its ``FirstStage``'s limit.
        self.first_stage = first_stage

    def message(self, what: str) -> str:
        """``<what> did not finish within N s``: the start of the user's message."""
        return f"{what} did not finish within {self.timeout:g} s"


@dataclass(frozen=True)
class FirstStage:
    """The first stage of a worker's job, with a time limit of its own: the worker writes
    the file ``done`` when the stage ends, and the job's ``timeout`` counts from then."""

    done: Path
    timeout: float

    def __post_init__(self) -> None:
        check_timeout(self.timeout)


@dataclass(frozen=True)
class WorkerJob:
    """One run of a worker: ``python -m module *argv`` in ``cwd``, for at most ``timeout``
    seconds, with its output in the file ``log``."""

    module: str
    argv: tuple[str, ...]
    cwd: Path
    log: Path
    timeout: float
    # Fake CPU devices the worker sees; None leaves the device count to the environment.
    devices: int | None = None
    # More environment variables for the worker.
    env: Mapping[str, str] = field(default_factory=dict)
    # False drops the worker's stdout: the log then holds its stderr alone.
    log_stdout: bool = True
    # A first stage timed apart (``timeout`` then counts from its end); None: none.
    first_stage: FirstStage | None = None
    # True: fork this process rather than start a fresh interpreter, which saves the
    # interpreter's start and the imports both share. Only from a process with one thread
    # that has not imported what the worker needs fresh (``can_fork``).
    fork: bool = False

    def __post_init__(self) -> None:
        check_timeout(self.timeout)

    def command(self) -> list[str]:
        """The command line of a fresh worker process."""
        return [sys.executable, "-c", _LAUNCH, self.module, *self.argv]

    def environment(self) -> dict[str, str]:
        """The environment of a fresh worker process."""
        return worker_env(self.devices, {**self.env, _PARENT_ENV: str(os.getpid())})

    def crash(self, returncode: int) -> Crash:
        """How the worker ended, for a worker that left no result."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return Crash(returncode, last_line(text), any(m in text for m in _MEMORY_MARKERS))


# Process groups of the fresh workers running now, for ``cancel_workers``.
_RUNNING: set[int] = set()
# Those of them whose leader is the worker's relay (``split_off_worker``).
_RELAYED: set[int] = set()
# Reentrant: ``cancel_workers`` runs in a signal handler too (Ctrl+C), perhaps while the
# interrupted code of the same thread holds it.
_RUNNING_LOCK = threading.RLock()
# Those of them ``cancel_workers`` killed: their relay's death is not their program's doing.
_CANCELLED: set[int] = set()
# The ``descendants`` marker of each user's command among them (``run_command``).
_MARKERS: dict[int, str] = {}
# Set by ``interrupt``: no worker starts after it, and any that registers is killed.
_INTERRUPTED = threading.Event()


def interrupt() -> None:
    """Stop every worker now and start no more (Ctrl+C at the command line): each
    ``run_worker`` waiting returns at once, and a later one raises ``KeyboardInterrupt``."""
    _INTERRUPTED.set()
    cancel_workers()


def interrupted() -> bool:
    """Whether ``interrupt`` was called."""
    return _INTERRUPTED.is_set()


def refuse_if_interrupted() -> None:
    """``KeyboardInterrupt`` once ``interrupt`` was called: no new worker starts."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def cancel_workers() -> None:
    """Kill every fresh worker this process is running now, with what it started.

    For shutting down: a window closed during a hung load must not wait out the load's
    time limit. Each ``run_worker`` waiting on one returns its (negative) exit code at once.
    """
    with _RUNNING_LOCK:
        groups = [(g, g in _RELAYED, _MARKERS.get(g)) for g in _RUNNING]
        _CANCELLED.update(g for g, _, _ in groups)
    for group, relayed, marker in groups:
        _cancel(group, relayed, marker)


def _cancel(group: int, relayed: bool, marker: str | None) -> None:
    """Kill process group ``group`` (its relay last, if ``relayed``: the relay ends what
    the worker left and exits, ``_end_relayed``) and the processes ``marker`` marks."""
    if not (relayed and end_group(group, spare=group)):
        kill_group(group)
    if marker is not None:
        kill_marked(marker)


@contextlib.contextmanager
def cancellable(group: int, marker: str | None = None, *, relayed: bool = False) -> Iterator[None]:
    """While the block runs, ``cancel_workers`` kills process group ``group`` (at once,
    after ``interrupt``), and the processes ``marker`` marks (``descendants``); with
    ``relayed`` the group's leader is the worker's relay, left to end what the worker
    left before it exits."""
    with _RUNNING_LOCK:
        _RUNNING.add(group)
        if relayed:
            _RELAYED.add(group)
        if marker is not None:
            _MARKERS[group] = marker
        if _INTERRUPTED.is_set():
            _CANCELLED.add(group)
    if _INTERRUPTED.is_set():
        _cancel(group, relayed, marker)
    try:
        yield
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(group)
            _RELAYED.discard(group)
            _CANCELLED.discard(group)
            _MARKERS.pop(group, None)


def _relayed_unless_cancelled(group: int, read: int, code: int, *, imported: bool = True) -> int:
    """``relayed_exit`` for the worker whose process group is ``group``; ``code`` itself
    when ``cancel_workers`` killed it (inside ``cancellable(group)``)."""
    with _RUNNING_LOCK:
        cancelled = group in _CANCELLED
    return code if cancelled else relayed_exit(read, code, imported=imported)


def run_worker(job: WorkerJob, while_waiting: Callable[[], object] | None = None) -> int:
    """Run ``job`` in a new process; its exit code (negative: the signal that killed it).

    ``while_waiting`` runs in this thread once the process has started. Raises
    ``WorkerTimeout`` when the worker runs past ``job.timeout`` (it is killed first).
    Whatever the worker started is killed with it when it ends, in a session of its own
    or not: its relay is a subreaper, and the job's processes carry a marker of its own
    (``descendants``).
    """
    memory_limit()  # a malformed setting is the user's error, not the worker's crash
    refuse_if_interrupted()
    marker = new_marker()
    read, write = relay_pipe()
    try:
        if job.fork:
            proc: subprocess.Popen | ForkedWorker = ForkedWorker(job, write, read, marker)
        else:
            with job.log.open("w") as log:
                proc = subprocess.Popen(
                    job.command(),
                    env={**job.environment(), _RELAY_ENV: str(write), MARKER_ENV: marker},
                    stdin=subprocess.DEVNULL,
                    stdout=log if job.log_stdout else subprocess.DEVNULL,
                    stderr=log,
                    cwd=str(job.cwd),
                    process_group=0,
                    pass_fds=(write,),
                )
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    try:
        with cancellable(proc.pid, marker, relayed=True):
            if while_waiting is not None:
                while_waiting()
            stage = job.first_stage
            if stage is not None:
                _wait_for_stage(proc, stage)
            code = wait_exit(proc, job.timeout)
            return _relayed_unless_cancelled(proc.pid, read, code)
    except subprocess.TimeoutExpired:
        raise WorkerTimeout(job.timeout) from None
    finally:
        _end_relayed(proc, marker, None)
        os.close(read)


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
        parent = env.pop(_PARENT_ENV, "")
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
    """The wait status of child ``pid`` once it ends (reaped), or None if it still runs
    after ``timeout`` seconds (None: no limit). Woken by the kernel (a pidfd) where Linux
    can, else polling."""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        ready = os.pidfd_open(pid)
    except (AttributeError, OSError):
        ready = None
    pause = 0.001
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
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


def run_json_worker(
    module: str,
    job: dict | Callable[[], dict],
    *,
    what: str,
    cwd: Path,
    timeout: float,
    devices: int | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    first_stage: FirstStage | None = None,
    fork: bool = False,
    timeout_fix: str = "allow more with --timeout",
) -> dict:
    """Run the JSON worker ``module`` on ``job`` in a new process; its report.

    ``what`` names the work in messages (``the GSPMD compile``). The worker's stderr
    goes to the file ``log`` when given (it is kept), else to a temporary one. ``job``
    may be a function that returns the job: it is called once the worker has started,
    which imports its modules meanwhile and waits for the job (``json_worker_main``);
    the time limit starts when it returns, and what it raises ends the worker and is
    raised here. Raises ``ShardscopeError`` when the worker runs past ``timeout``, dies
    without a report or reports a failure. The worker's stdout is dropped; a crash
    report quotes its stderr. With ``first_stage`` (see ``FirstStage``), a worker that
    runs past the stage's limit raises ``WorkerTimeout`` for the caller to word. ``fork``
    forks the worker from this process (``WorkerJob.fork``). ``timeout_fix`` ends the
    message of a worker that ran out of time: how the user allows more.
    """
    with tempfile.TemporaryDirectory(prefix="shardscope-worker-") as tmp:
        job_path, out = Path(tmp) / "job.json", Path(tmp) / "out.json"

        def write_job() -> None:
            text = json.dumps(job() if callable(job) else job)
            # Written whole, then renamed: a waiting worker never reads half a job.
            part = job_path.with_suffix(".part")
            part.write_text(text)
            os.replace(part, job_path)

        if not callable(job):
            write_job()
        worker = WorkerJob(
            module,
            (str(job_path), str(out)),
            cwd=cwd,
            log=log if log is not None else Path(tmp) / "stderr.txt",
            timeout=timeout,
            devices=devices,
            env=dict(env or {}),
            log_stdout=False,
            first_stage=first_stage,
            fork=fork,
        )
        try:
            returncode = run_worker(worker, write_job if callable(job) else None)
        except WorkerTimeout as exc:
            if exc.first_stage:
                raise
            raise ShardscopeError(f"{exc.message(what)}; {timeout_fix}") from None
        if not out.exists():
            crash = worker.crash(returncode)
            if crash.out_of_memory:
                raise ShardscopeError(memory_message(what, memory_limit()))
            detail = f" (last output: {crash.last_line})" if crash.last_line else ""
            raise ShardscopeError(f"{what} crashed: its worker {crash.how}{detail}")
        report = json.loads(out.read_text())
    if not report.get("ok"):
        raise ShardscopeError(report.get("error", f"{what} failed"))
    return report


def wait_for_file(path: Path, poll: float = 0.01) -> None:
    """Wait until ``path`` exists (a worker whose job is written after it started; its
    parent kills it if the job never comes)."""
    while not path.exists():
        time.sleep(poll)


def json_worker_main(argv: list[str], work: Callable[[dict, Path], dict], *, failure: str) -> int:
    """The child's side of ``run_json_worker``; ``argv`` is ``JOB_PATH OUT_PATH``.

    Calls ``work(job, scratch)``, where ``scratch`` is a folder the worker may fill (it is
    removed with the job), and writes the report it returns. An exception becomes the
    report ``{"ok": false, "error": "<failure>: <Type>: <message>"}`` with the whole
    message (``exception_text``); a failed allocation, ``<failure>: ... ran out of memory``.
    """
    job_path, out_path = argv
    wait_for_file(Path(job_path))
    job = json.loads(Path(job_path).read_text())
    try:
        report = work(job, Path(job_path).parent)
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        if is_out_of_memory(exc):
            error = f"{failure}: {memory_message('the worker', memory_limit())}"
        else:
            error = f"{failure}: {exception_text(exc)}"
        report = {"ok": False, "error": error}
    Path(out_path).write_text(json.dumps(report))
    return 0


def exception_text(exc: BaseException, max_lines: int = 40, max_chars: int = 4000) -> str:
    """``Type: message`` with the whole message: libraries such as Equinox name the
    offending argument lines below the first. Blank runs are squeezed and a very long
    message is cut, saying so."""
    lines: list[str] = []
    for line in str(exc).strip().splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    text = "\n".join(lines[:max_lines])
    if len(lines) > max_lines or len(text) > max_chars:
        text = text[:max_chars].rstrip() + "\n... (message cut)"
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
