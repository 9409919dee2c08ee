"""Worker processes: how one is started, held to its time limit and reported on when it dies.

A worker is a module of ours run as ``python -m MODULE ARG...``; its ``main(argv)`` does
the work and returns the exit code. ``WorkerJob`` says which module, with what arguments,
in which folder, for how long and on how many fake CPU devices; ``run_worker`` runs it
in a fresh process (the fork server in ``forkserver`` runs the same jobs in a warm one).
A worker that runs past its limit is killed (``WorkerTimeout``); one that dies without
its result is described by ``Crash``: the signal or exit status, and its last line.

A JSON worker takes a job file and writes a report file (``{"ok": true, ...}`` or
``{"ok": false, "error": ...}``): ``run_json_worker`` is the parent's side, turning every
way it can fail into a one-line ``ShardscopeError``, ``json_worker_main`` the child's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shardscope.backend.errors import ShardscopeError

_DEVICE_COUNT = "xla_force_host_platform_device_count"


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


class WorkerTimeout(Exception):
    """A worker ran past its time limit and was killed."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"did not finish within {timeout:g} s")
        self.timeout = timeout

    def message(self, what: str) -> str:
        """``<what> did not finish within N s``: the start of the user's message."""
        return f"{what} did not finish within {self.timeout:g} s"


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

    def command(self) -> list[str]:
        """The command line of a fresh worker process."""
        return [sys.executable, "-m", self.module, *self.argv]

    def environment(self) -> dict[str, str]:
        """The environment of a fresh worker process."""
        return worker_env(self.devices, self.env)

    def crash(self, returncode: int) -> Crash:
        """How the worker ended, for a worker that left no result."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return Crash(returncode, last_line(text))


def run_worker(job: WorkerJob, while_waiting: Callable[[], object] | None = None) -> int:
    """Run ``job`` in a new process; its exit code (negative: the signal that killed it).

    ``while_waiting`` runs in this thread once the process has started. Raises
    ``WorkerTimeout`` when the worker runs past ``job.timeout`` (it is killed first).
    """
    with job.log.open("w") as log:
        proc = subprocess.Popen(
            job.command(),
            env=job.environment(),
            stdout=log if job.log_stdout else subprocess.DEVNULL,
            stderr=log,
            cwd=str(job.cwd),
        )
        try:
            if while_waiting is not None:
                while_waiting()
            return proc.wait(timeout=job.timeout)
        except subprocess.TimeoutExpired:
            raise WorkerTimeout(job.timeout) from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def run_json_worker(
    module: str,
    job: dict,
    *,
    what: str,
    cwd: Path,
    timeout: float,
    devices: int | None = None,
    env: Mapping[str, str] | None = None,
) -> dict:
    """Run the JSON worker ``module`` on ``job`` in a new process; its report.

    ``what`` names the work in messages (``the GSPMD compile``). Raises
    ``ShardscopeError`` when the worker runs past ``timeout``, dies without a report or
    reports a failure. The worker's stdout is dropped; a crash report quotes its stderr.
    """
    with tempfile.TemporaryDirectory(prefix="shardscope-worker-") as tmp:
        job_path, out = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_path.write_text(json.dumps(job))
        worker = WorkerJob(
            module,
            (str(job_path), str(out)),
            cwd=cwd,
            log=Path(tmp) / "stderr.txt",
            timeout=timeout,
            devices=devices,
            env=dict(env or {}),
            log_stdout=False,
        )
        try:
            returncode = run_worker(worker)
        except WorkerTimeout as exc:
            raise ShardscopeError(f"{exc.message(what)}; allow more with --timeout") from None
        if not out.exists():
            crash = worker.crash(returncode)
            raise ShardscopeError(
                f"{what} crashed ({crash.last_line or f'exit status {crash.returncode}'})"
            )
        report = json.loads(out.read_text())
    if not report.get("ok"):
        raise ShardscopeError(report.get("error", f"{what} failed"))
    return report


def json_worker_main(argv: list[str], work: Callable[[dict, Path], dict], *, failure: str) -> int:
    """The child's side of ``run_json_worker``; ``argv`` is ``JOB_PATH OUT_PATH``.

    Calls ``work(job, scratch)``, where ``scratch`` is a folder the worker may fill (it is
    removed with the job), and writes the report it returns. An exception becomes the
    report ``{"ok": false, "error": "<failure>: <Type>: <first line>"}``.
    """
    job_path, out_path = argv
    job = json.loads(Path(job_path).read_text())
    try:
        report = work(job, Path(job_path).parent)
    except Exception as exc:  # noqa: BLE001 - user code and the compiler both run here
        first = str(exc).splitlines()[0] if str(exc) else ""
        report = {"ok": False, "error": f"{failure}: {type(exc).__name__}: {first}"}
    Path(out_path).write_text(json.dumps(report))
    return 0
