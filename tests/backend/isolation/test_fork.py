"""Forked workers: they run their module as a fresh worker would."""

import subprocess
import sys

import pytest

from shardscope.backend.isolation.fork import can_fork
from shardscope.backend.isolation.limits import MEMORY_ENV
from shardscope.backend.isolation.worker_job import (
    last_line,
)
from tests.support.inputs import REPO
from tests.support.processes import gone_within
from tests.support.workers import FORKER, worker_module


def _fork_in_fresh_process(tmp_path, name, *, timeout=60.0):
    """``run_worker`` of module ``name`` with ``fork=True``, from a fresh single-threaded
    process (as the CLI forks its run worker); what it printed: the code or the timeout."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from shardscope.backend.isolation.fork import can_fork\n"
        "from shardscope.backend.isolation.jobs import run_worker\n"
        "from shardscope.backend.isolation.worker_job import WorkerJob, WorkerTimeout\n"
        "assert can_fork()\n"
        f"here = Path({str(tmp_path)!r})\n"
        f"job = WorkerJob({name!r}, ('a', 'b'), here, here / 'log.txt', {timeout!r}, "
        "env={'SHARDSCOPE_TEST_VAR': 'set'}, fork=True)\n"
        "try:\n    print(run_worker(job))\nexcept WorkerTimeout:\n    print('timeout')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_forked_worker_runs_its_module_as_a_fresh_one_would(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "3")
    name = worker_module(
        tmp_path,
        "reports",
        "import os, resource, sys\n"
        "print(sys.argv[1:], os.getcwd(), os.environ['SHARDSCOPE_TEST_VAR'])\n"
        "print(os.getpgid(0) == os.getppid(), resource.getrlimit(resource.RLIMIT_DATA)[0])\n"
        "print(sys.stdin.read() == '', 'SHARDSCOPE_WORKER_PARENT' in os.environ)\n",
    )
    assert _fork_in_fresh_process(tmp_path, name) == "0"
    assert (tmp_path / "log.txt").read_text().splitlines() == [
        f"['a', 'b'] {tmp_path} set",
        f"True {3 * 2**30}",
        "True False",
    ]


def test_a_forked_worker_that_raises_or_exits_reports_like_a_fresh_one(tmp_path):
    name = worker_module(tmp_path, "raises", "raise ValueError('the worker failed')\n")
    assert _fork_in_fresh_process(tmp_path, name) == "1"
    assert last_line((tmp_path / "log.txt").read_text()) == "ValueError: the worker failed"
    name = worker_module(tmp_path, "exits", "import sys\nsys.exit(7)\n")
    assert _fork_in_fresh_process(tmp_path, name) == "7"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_forked_worker_forks_ends_with_it_and_at_its_time_limit(tmp_path):
    name = worker_module(tmp_path, "forker", FORKER)
    assert _fork_in_fresh_process(tmp_path, name) == "0"
    assert gone_within(int((tmp_path / "child.pid").read_text()), 5)
    name = worker_module(tmp_path, "forker_sleeps", FORKER + "time.sleep(600)\n")
    assert _fork_in_fresh_process(tmp_path, name, timeout=3) == "timeout"
    assert gone_within(int((tmp_path / "child.pid").read_text()), 5)


def test_this_test_process_may_not_fork_workers():
    import jax  # noqa: F401 - a process with JAX imported, as the window's

    assert not can_fork()
