"""Running worker jobs: time limits, first stages, what a worker starts, cancelling, a user's command."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from shardscope.backend.isolation.jobs import run_command, run_worker, wait_exit, wait_pid
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.registry import cancel_workers
from shardscope.backend.isolation.worker_job import (
    FirstStage,
    WorkerTimeout,
)
from tests.support.processes import gone_within
from tests.support.workers import FORKER, staged_module, worker_job, worker_module


def test_the_device_count_reaches_the_child(tmp_path):
    # The test process itself has 64 fake devices (tests/conftest.py): the job's count
    # must replace that one.
    name = worker_module(
        tmp_path, "count", "import jax\nprint(jax.device_count(), jax.devices()[0].platform)\n"
    )
    assert run_worker(worker_job(tmp_path, name, devices=3)) == 0
    assert (tmp_path / "log.txt").read_text().split()[-2:] == ["3", "cpu"]


def test_a_worker_past_its_time_is_killed(tmp_path):
    name = worker_module(
        tmp_path,
        "sleeper",
        "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n",
    )
    started = time.monotonic()
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(worker_job(tmp_path, name, timeout=2))
    assert time.monotonic() - started < 30
    assert caught.value.message("loading") == "loading did not finish within 2 s"
    # The worker's relay is reaped here, the worker by the system (its parent was the relay).
    assert gone_within(int((tmp_path / "log.txt").read_text().split()[0]), 5)


def test_while_waiting_runs_once_the_worker_started(tmp_path):
    name = worker_module(tmp_path, "quick", "print('done')\n")
    calls = []
    assert run_worker(worker_job(tmp_path, name), while_waiting=lambda: calls.append(1)) == 0
    assert calls == [1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_worker_forks_ends_with_it(tmp_path):
    name = worker_module(tmp_path, "forker", FORKER)
    assert run_worker(worker_job(tmp_path, name)) == 0
    child = int((tmp_path / "child.pid").read_text())
    assert gone_within(child, 5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_worker_forks_ends_when_it_times_out(tmp_path):
    name = worker_module(tmp_path, "forker", FORKER + "time.sleep(600)\n")
    with pytest.raises(WorkerTimeout):
        run_worker(worker_job(tmp_path, name, timeout=3))
    child = int((tmp_path / "child.pid").read_text())
    assert gone_within(child, 5)


def test_cancel_workers_ends_a_running_worker_at_once(tmp_path):
    name = worker_module(tmp_path, "stuck", "import time\ntime.sleep(600)\n")
    cancel = threading.Timer(1.0, cancel_workers)
    cancel.start()
    begin = time.monotonic()
    try:
        code = run_worker(worker_job(tmp_path, name, timeout=300))
    finally:
        cancel.cancel()
    assert code == -signal.SIGKILL
    assert time.monotonic() - begin < 30


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_users_command_runs_as_a_worker_and_what_it_starts_ends_with_it(tmp_path):
    from shardscope.backend.isolation.jobs import run_command

    log = (tmp_path / "out.txt").open("w")
    code = run_command(
        ["sh", "-c", "sleep 600 & echo $! > sleeper.pid; echo started; exit 3"],
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=60,
        output=log.fileno(),
    )
    log.close()
    assert code == 3 and (tmp_path / "out.txt").read_text() == "started\n"
    assert gone_within(int((tmp_path / "sleeper.pid").read_text()), 5)
    with pytest.raises(WorkerTimeout):
        run_command(["sleep", "600"], env=dict(os.environ), cwd=tmp_path, timeout=1)
    code = run_command(["/no/such/program"], env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert code == 127


def test_a_first_stage_and_the_rest_each_get_their_own_time(tmp_path):
    name, done = staged_module(tmp_path, 1.5, 1.5)
    job = worker_job(tmp_path, name, timeout=2.5, first_stage=FirstStage(done, 2.5))
    assert run_worker(job) == 0  # 3 s in all, each stage under its 2.5 s


def test_a_worker_past_its_first_stage_is_killed_and_says_so(tmp_path):
    name, done = staged_module(tmp_path, 60, 0)
    started = time.monotonic()
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(worker_job(tmp_path, name, timeout=60, first_stage=FirstStage(done, 1)))
    assert time.monotonic() - started < 30
    assert caught.value.first_stage and caught.value.timeout == 1


def test_a_worker_past_its_time_after_the_first_stage_is_killed(tmp_path):
    name, done = staged_module(tmp_path, 0, 60)
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(worker_job(tmp_path, name, timeout=1, first_stage=FirstStage(done, 60)))
    assert not caught.value.first_stage and caught.value.timeout == 1


def test_a_worker_that_dies_in_its_first_stage_is_reported_at_once(tmp_path):
    name = worker_module(tmp_path, "dies", "import os\nos._exit(3)\n")
    started = time.monotonic()
    job = worker_job(tmp_path, name, timeout=60, first_stage=FirstStage(tmp_path / "never", 60))
    assert run_worker(job) == 3
    assert time.monotonic() - started < 10


def test_a_json_worker_past_its_first_stage_raises_the_timeout_for_the_caller(tmp_path):
    name = worker_module(
        tmp_path,
        "json_slow",
        "import time\ntime.sleep(60)\n",
    )
    with pytest.raises(WorkerTimeout) as caught:
        run_json_worker(
            name,
            {},
            what="the work",
            cwd=tmp_path,
            timeout=60,
            first_stage=FirstStage(tmp_path / "never", 1),
        )
    assert caught.value.first_stage


def test_wait_exit_returns_the_exit_code_when_the_process_ends():
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(0.3); raise SystemExit(4)"]
    )
    started = time.monotonic()
    assert wait_exit(proc, 30) == 4
    assert time.monotonic() - started < 10
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(proc, 0.2)
    finally:
        proc.kill()
        proc.wait()


_SETSID = (
    "import subprocess, sys, time\n"
    "env = None if sys.argv[1] == 'keep' else {}\n"
    "p = subprocess.Popen(['/bin/sleep', '600'], start_new_session=True, env=env)\n"
    "open(sys.argv[1] + '.pid', 'w').write(str(p.pid))\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def _ended(pid_file) -> bool:
    """Whether the sleeper whose pid is in ``pid_file`` ends within 5 s (killed if not)."""
    pid = int(pid_file.read_text())
    if gone_within(pid, 5):
        return True
    os.kill(pid, signal.SIGKILL)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("env", ["keep", "own"])
def test_what_a_users_command_starts_in_a_session_of_its_own_ends_with_it(tmp_path, env):
    # The child keeps the command's environment or has its own: either way it escapes the
    # command's process group.
    command = [sys.executable, "-c", _SETSID, env]
    code = run_command([*command, "0"], env=dict(os.environ), cwd=tmp_path, timeout=60)
    assert code == 0 and _ended(tmp_path / f"{env}.pid")
    with pytest.raises(WorkerTimeout):
        run_command([*command, "600"], env=dict(os.environ), cwd=tmp_path, timeout=3)
    assert _ended(tmp_path / f"{env}.pid")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_cancel_workers_ends_what_a_users_command_started_in_a_session_of_its_own(tmp_path):
    cancel = threading.Timer(3.0, cancel_workers)
    cancel.start()
    try:
        code = run_command(
            [sys.executable, "-c", _SETSID, "keep", "600"],
            env=dict(os.environ),
            cwd=tmp_path,
            timeout=300,
        )
    finally:
        cancel.cancel()
    assert code == -signal.SIGKILL and _ended(tmp_path / "keep.pid")


def _zombie(pid: int) -> bool:
    """Whether child ``pid`` has ended and waits to be reaped (Linux's /proc)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _until(condition) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the child never ended"
        time.sleep(0.01)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_wait_pid_past_its_time_leaves_an_ended_child_unreaped_for_the_caller():
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    _until(lambda: _zombie(pid))
    # it ended before the look, but the look came past the time: past it, as always
    assert wait_pid(pid, 1e-9) is None
    assert _zombie(pid)  # not reaped: the caller still can
    assert os.waitstatus_to_exitcode(wait_pid(pid, 30)) == 7


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_whose_end_was_seen_past_its_time_is_past_its_time(tmp_path):
    # The worker ends while this process is busy in while_waiting for longer than the
    # worker may take: its exit is there when it is looked at, and the limit still holds.
    name = worker_module(tmp_path, "quick", "import os\nprint(os.getppid(), flush=True)\n")
    log = tmp_path / "log.txt"

    def busy_until_it_ended():
        _until(lambda: log.exists() and log.read_text().strip())
        relay = int(log.read_text().split()[0])  # the worker's parent: our child
        _until(lambda: _zombie(relay))

    with pytest.raises(WorkerTimeout):
        run_worker(worker_job(tmp_path, name, timeout=1e-9), while_waiting=busy_until_it_ended)
    assert (
        run_worker(worker_job(tmp_path, name, timeout=30), while_waiting=busy_until_it_ended) == 0
    )
