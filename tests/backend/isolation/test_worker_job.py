"""Worker jobs: environment, crash reports, last lines."""

import signal

from shardscope.backend.isolation.jobs import run_worker
from shardscope.backend.isolation.worker_job import (
    Crash,
    last_line,
    worker_env,
)
from tests.support.workers import worker_job, worker_module


def test_worker_env_keeps_a_chosen_platform_unless_devices_are_asked_for(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/x --xla_force_host_platform_device_count=64")
    assert worker_env()["JAX_PLATFORMS"] == "cuda"
    env = worker_env(8, {"EXTRA": "1"})
    assert env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_FLAGS"] == "--xla_dump_to=/x --xla_force_host_platform_device_count=8"
    assert env["EXTRA"] == "1"
    monkeypatch.delenv("JAX_PLATFORMS")
    assert worker_env()["JAX_PLATFORMS"] == "cpu"


def test_crash_report_of_a_child_killed_by_a_signal(tmp_path):
    name = worker_module(
        tmp_path,
        "doomed",
        "import os, signal, sys\nprint('about to die', file=sys.stderr, flush=True)\n"
        "print('  ', file=sys.stderr, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
    )
    job = worker_job(tmp_path, name)
    returncode = run_worker(job)
    assert returncode == -signal.SIGKILL
    crash = job.crash(returncode)
    assert crash == Crash(-9, "about to die")
    assert crash.how == "was killed by SIGKILL"


def test_crash_report_of_a_child_that_exits(tmp_path):
    name = worker_module(tmp_path, "quitter", "import sys\nsys.exit(3)\n")
    job = worker_job(tmp_path, name)
    crash = job.crash(run_worker(job))
    assert crash.how == "exited with status 3" and crash.last_line is None
    assert Crash(-1000, None).how == "was killed by signal 1000"


def test_last_line_skips_blanks_and_stays_short():
    assert last_line("first\nsecond\n\n   \n") == "second"
    assert last_line("x" * 300) == "x" * 200
    assert last_line(" \n") is None
