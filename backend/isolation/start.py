"""How a worker process begins: ``launch`` (a module of ours), ``exec_command`` (a user's
own command), and ``announce``, their first acts.

The parent passes what the start needs in the environment: its pid (to notice it died
first), the relay's pipe, a canceller's folder and a niceness.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from pathlib import Path

from shardscope.backend.isolation.limits import become_worker, memory_limit
from shardscope.backend.isolation.relay import split_off_worker

# The pid of the process that started a fresh worker, to notice that it died first.
PARENT_ENV = "SHARDSCOPE_WORKER_PARENT"
# The file descriptor a fresh worker's relay reports the worker's end through (``_relay``).
RELAY_ENV = "SHARDSCOPE_WORKER_RELAY"
# A folder a canceller (``run.cancel.Cancel``) watches: a worker started with it writes
# its process group's id there as it starts, before its module's imports, and ends at once
# if told to already (``announce``).
CANCEL_FOLDER_ENV = "SHARDSCOPE_CANCEL_FOLDER"
# A niceness a worker takes as it starts (``os.nice``): work in the background, such as
# the window's compile after each edit, yields the processors to the app.
NICE_ENV = "SHARDSCOPE_WORKER_NICE"
# How a fresh worker starts: ``launch`` below, then the worker module.
# How a fresh worker starts: ``launch`` below, then the worker module.
LAUNCH = "from shardscope.backend.isolation.start import launch; launch()"
# How a user's own command starts (``capture``): ``exec_command`` below, then the command.
# The launcher's own Python runs with ``LAUNCHER_ENV`` set (the command's does not), so
# that the capture's ``sitecustomize`` (on the command's ``PYTHONPATH``) leaves it alone.
LAUNCHER_ENV = "SHARDSCOPE_COMMAND_LAUNCHER"
EXEC = "from shardscope.backend.isolation.start import exec_command; exec_command()"


def launch() -> None:
    """A fresh worker's start: ``python -c _LAUNCH MODULE ARG...`` becomes a worker, then
    runs ``MODULE`` as ``python -m MODULE ARG...`` would (under a relay, when the job
    gave it a pipe to report through)."""
    parent = os.environ.pop(PARENT_ENV, "")
    report = os.environ.pop(RELAY_ENV, "")
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
    parent = os.environ.pop(PARENT_ENV, "")
    report = os.environ.pop(RELAY_ENV, "")
    os.environ.pop(LAUNCHER_ENV, None)
    become_worker(int(parent) if parent.isdigit() else None, memory_limit())
    if report.isdigit():
        split_off_worker(int(report))
    argv = sys.argv[1:]
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot run {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(127)
