"""A worker's relay: a worker that kills its parent, and how a worker ended, relayed."""

import os
import signal
import subprocess
import sys

import pytest

from shardscope.backend.isolation.jobs import run_command, run_worker
from tests.support.inputs import REPO
from tests.support.workers import worker_job, worker_module

_KILLS_PARENT = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the worker proper from its relay")
def test_a_worker_that_kills_its_parent_leaves_the_process_that_started_it_standing(tmp_path):
    name = worker_module(tmp_path, "kills_parent", _KILLS_PARENT)
    # From a process of its own, which prints how each job ended: a worker whose parent it
    # were would kill it.
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from shardscope.backend.isolation.jobs import run_command, run_worker\n"
        "from shardscope.backend.isolation.relay import KilledItsParent\n"
        "from shardscope.backend.isolation.worker_job import WorkerJob\n"
        f"here = Path({str(tmp_path)!r})\n"
        "def ended(start):\n"
        "    try:\n        return start()\n"
        "    except KilledItsParent as exc:\n        return f'{exc.signum} {exc.imported} {exc}'\n"
        "for fork in (False, True):\n"
        f"    job = WorkerJob({name!r}, (), here, here / 'log.txt', 60.0, fork=fork)\n"
        "    print(ended(lambda: run_worker(job)))\n"
        "print(ended(lambda: run_command([sys.executable, 'kills_parent.py'], env={}, "
        "cwd=here, timeout=60)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    fresh, forked, command = done.stdout.splitlines()
    assert (
        fresh
        == forked
        == (
            "9 True the program killed the process that ran it (SIGKILL to its parent): "
            "shardscope imports a program file in a process of its own, so code run at import "
            'must not signal os.getppid(); move it under `if __name__ == "__main__":`'
        )
    )
    assert command.startswith("9 False the program killed the process that ran it (SIGKILL")
    assert command.endswith("remove the os.kill of os.getppid()")


def test_a_worker_relays_how_it_ended_whatever_it_was(tmp_path):
    # The relay between this process and the worker ends as the worker did.
    name = worker_module(tmp_path, "aborts", "import os\nos.abort()\n")
    assert run_worker(worker_job(tmp_path, name)) == -signal.SIGABRT
    name = worker_module(tmp_path, "exits", "import os\nos._exit(137)\n")
    assert run_worker(worker_job(tmp_path, name)) == 137
    code = run_command(
        ["sh", "-c", "kill -TERM $$"], env=dict(os.environ), cwd=tmp_path, timeout=60
    )
    assert code == -signal.SIGTERM
