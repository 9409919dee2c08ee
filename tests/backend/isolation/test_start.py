"""A worker's start: it dies with the process that started it."""

import subprocess
import sys
import time

import pytest

from tests.support.processes import gone_within
from tests.support.workers import worker_module


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal")
def test_a_worker_dies_with_the_process_that_started_it(tmp_path):
    name = worker_module(
        tmp_path,
        "sleeper",
        "import os, time\nopen('worker.pid', 'w').write(str(os.getpid()))\ntime.sleep(600)\n",
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom pathlib import Path\n"
            "from shardscope.backend.isolation.jobs import run_worker\n"
            "from shardscope.backend.isolation.worker_job import WorkerJob\n"
            f"here = Path({str(tmp_path)!r})\n"
            f"run_worker(WorkerJob({name!r}, (), here, here / 'log.txt', 600.0))\n",
        ]
    )
    try:
        deadline = time.monotonic() + 60
        # the file exists, empty, a moment before the worker's write lands in it
        while not (tmp_path / "worker.pid").exists() or not (tmp_path / "worker.pid").read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        worker = int((tmp_path / "worker.pid").read_text())
        parent.kill()
        parent.wait()
        assert gone_within(worker, 5)
    finally:
        parent.kill()
        parent.wait()
