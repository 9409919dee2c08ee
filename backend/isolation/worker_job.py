"""What a worker job is (``WorkerJob``) and how one that failed ended (``Crash``,
``WorkerTimeout``).

A worker is a module of ours run as ``python -m MODULE ARG...``; its ``main(argv)`` does
the work and returns the exit code. ``WorkerJob`` says which module, with what arguments,
in which folder, for how long, on how many fake CPU devices and in which cancel group.
A job may time its first stage apart (``FirstStage``: loading a program, say, before
running it): the worker writes a file when the stage ends, and the job's time limit
counts from then.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shardscope.backend.isolation.limits import MEMORY_MARKERS, check_timeout
from shardscope.backend.isolation.registry import CancelGroup
from shardscope.backend.isolation.start import LAUNCH, PARENT_ENV

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
    # The cancel group the job runs in; None: the registry's default group.
    group: CancelGroup | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_timeout(self.timeout)

    def command(self) -> list[str]:
        """The command line of a fresh worker process."""
        return [sys.executable, "-c", LAUNCH, self.module, *self.argv]

    def environment(self) -> dict[str, str]:
        """The environment of a fresh worker process."""
        return worker_env(self.devices, {**self.env, PARENT_ENV: str(os.getpid())})

    def crash(self, returncode: int) -> Crash:
        """How the worker ended, for a worker that left no result."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return Crash(returncode, last_line(text), any(m in text for m in MEMORY_MARKERS))
