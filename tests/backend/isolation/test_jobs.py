"""Worker processes: environment, fake devices, time limits, crash reports, JSON workers."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.jobs import (
    MEMORY_ENV,
    Crash,
    FirstStage,
    WorkerJob,
    WorkerTimeout,
    can_fork,
    cancel_workers,
    exception_text,
    last_line,
    memory_limit,
    run_command,
    run_json_worker,
    run_worker,
    wait_exit,
    worker_env,
)
from tests.support.inputs import REPO
from tests.support.processes import gone_within


def _module(tmp_path, name, text):
    (tmp_path / f"{name}.py").write_text(text)
    return name


def _job(tmp_path, module, *argv, timeout=120.0, **extra):
    return WorkerJob(
        module, tuple(argv), cwd=tmp_path, log=tmp_path / "log.txt", timeout=timeout, **extra
    )


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


def test_the_device_count_reaches_the_child(tmp_path):
    # The test process itself has 64 fake devices (tests/conftest.py): the job's count
    # must replace that one.
    name = _module(
        tmp_path, "count", "import jax\nprint(jax.device_count(), jax.devices()[0].platform)\n"
    )
    assert run_worker(_job(tmp_path, name, devices=3)) == 0
    assert (tmp_path / "log.txt").read_text().split()[-2:] == ["3", "cpu"]


def test_a_worker_past_its_time_is_killed(tmp_path):
    name = _module(
        tmp_path,
        "sleeper",
        "import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n",
    )
    started = time.monotonic()
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(_job(tmp_path, name, timeout=2))
    assert time.monotonic() - started < 30
    assert caught.value.message("loading") == "loading did not finish within 2 s"
    # The worker's relay is reaped here, the worker by the system (its parent was the relay).
    assert gone_within(int((tmp_path / "log.txt").read_text().split()[0]), 5)


def test_while_waiting_runs_once_the_worker_started(tmp_path):
    name = _module(tmp_path, "quick", "print('done')\n")
    calls = []
    assert run_worker(_job(tmp_path, name), while_waiting=lambda: calls.append(1)) == 0
    assert calls == [1]


def test_crash_report_of_a_child_killed_by_a_signal(tmp_path):
    name = _module(
        tmp_path,
        "doomed",
        "import os, signal, sys\nprint('about to die', file=sys.stderr, flush=True)\n"
        "print('  ', file=sys.stderr, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
    )
    job = _job(tmp_path, name)
    returncode = run_worker(job)
    assert returncode == -signal.SIGKILL
    crash = job.crash(returncode)
    assert crash == Crash(-9, "about to die")
    assert crash.how == "was killed by SIGKILL"


def test_crash_report_of_a_child_that_exits(tmp_path):
    name = _module(tmp_path, "quitter", "import sys\nsys.exit(3)\n")
    job = _job(tmp_path, name)
    crash = job.crash(run_worker(job))
    assert crash.how == "exited with status 3" and crash.last_line is None
    assert Crash(-1000, None).how == "was killed by signal 1000"


def test_last_line_skips_blanks_and_stays_short():
    assert last_line("first\nsecond\n\n   \n") == "second"
    assert last_line("x" * 300) == "x" * 200
    assert last_line(" \n") is None


def _json_worker(tmp_path, name, body):
    return _module(
        tmp_path,
        name,
        "import sys\nfrom shardscope.backend.isolation.jobs import json_worker_main\n"
        f"def work(job, scratch):\n{body}\n"
        "sys.exit(json_worker_main(sys.argv[1:], work, failure='counting failed'))\n",
    )


def test_a_json_worker_reports_with_its_devices(tmp_path):
    name = _json_worker(
        tmp_path,
        "counter",
        "    import jax\n"
        "    (scratch / 'note').write_text('scratch is writable')\n"
        "    return {'ok': True, 'devices': jax.device_count(), 'job': job}\n",
    )
    report = run_json_worker(name, {"a": 1}, what="the count", cwd=tmp_path, timeout=120, devices=5)
    assert report == {"ok": True, "devices": 5, "job": {"a": 1}}


def test_a_json_worker_failure_shows_the_whole_message(tmp_path):
    # Shaped like Equinox's errors, which name the offending argument on the third line.
    name = _json_worker(
        tmp_path,
        "failing",
        "    raise ValueError('bad job\\n\\n\\n  The argument `x` is a float   \\n')",
    )
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == (
        "counting failed: ValueError: bad job\n\n  The argument `x` is a float"
    )


def test_exception_text_is_cut_when_very_long():
    text = exception_text(RuntimeError("\n".join(f"line {i}" for i in range(100))), max_lines=3)
    assert text == "RuntimeError: line 0\nline 1\nline 2\n... (message cut)"
    assert exception_text(KeyError()) == "KeyError"


def test_a_json_worker_that_says_not_ok_without_a_reason(tmp_path):
    name = _json_worker(tmp_path, "unhappy", "    return {'ok': False}")
    with pytest.raises(ShardscopeError, match="^the count failed$"):
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)


def test_a_json_worker_that_crashes_quotes_its_stderr(tmp_path):
    name = _json_worker(
        tmp_path,
        "crashing",
        "    import os\n    print('on stdout, dropped', flush=True)\n"
        "    print('Fatal: out of luck', file=sys.stderr, flush=True)\n    os.abort()",
    )
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == (
        "the count crashed: its worker was killed by SIGABRT (last output: Fatal: out of luck)"
    )


def test_a_silent_json_worker_crash_names_the_exit_status(tmp_path):
    name = _module(tmp_path, "silent", "import sys\nsys.exit(4)\n")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == "the count crashed: its worker exited with status 4"


def test_a_json_worker_past_its_time_names_the_fix(tmp_path):
    name = _json_worker(tmp_path, "slow", "    import time\n    time.sleep(60)")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=1.5)
    assert str(caught.value) == "the count did not finish within 1.5 s; allow more with --timeout"


# A worker that forks a child which would sleep for ten minutes; both write their pids.
_FORKER = (
    "import os, sys, time\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    time.sleep(600)\n"
    "    os._exit(0)\n"
    "open('child.pid', 'w').write(str(child))\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_worker_forks_ends_with_it(tmp_path):
    name = _module(tmp_path, "forker", _FORKER)
    assert run_worker(_job(tmp_path, name)) == 0
    child = int((tmp_path / "child.pid").read_text())
    assert gone_within(child, 5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_worker_forks_ends_when_it_times_out(tmp_path):
    name = _module(tmp_path, "forker", _FORKER + "time.sleep(600)\n")
    with pytest.raises(WorkerTimeout):
        run_worker(_job(tmp_path, name, timeout=3))
    child = int((tmp_path / "child.pid").read_text())
    assert gone_within(child, 5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal")
def test_a_worker_dies_with_the_process_that_started_it(tmp_path):
    name = _module(
        tmp_path,
        "sleeper",
        "import os, time\nopen('worker.pid', 'w').write(str(os.getpid()))\ntime.sleep(600)\n",
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom pathlib import Path\n"
            "from shardscope.backend.isolation.jobs import WorkerJob, run_worker\n"
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


def test_workers_have_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "3")
    name = _module(
        tmp_path, "limits", "import resource\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0])\n"
    )
    assert run_worker(_job(tmp_path, name)) == 0
    assert (tmp_path / "log.txt").read_text().split() == [str(3 * 2**30)]


def test_the_memory_limit_defaults_to_most_of_this_machine_and_can_be_lifted(monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert memory_limit() == max(int(physical * 0.8), 4 * 2**30)
    monkeypatch.setenv(MEMORY_ENV, "0")
    assert memory_limit() is None
    for bad in ("lots", "-1", "nan"):
        monkeypatch.setenv(MEMORY_ENV, bad)
        with pytest.raises(ShardscopeError, match="set it to e.g. 16, or 0 for no limit"):
            memory_limit()


def test_a_json_worker_out_of_memory_says_so_and_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "0.5")
    name = _json_worker(tmp_path, "greedy", "    return {'ok': True, 'n': len(bytearray(2**31))}")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == (
        "counting failed: the worker ran out of memory (limit 0.5 GB); "
        f"allow more with {MEMORY_ENV}=1 (0: no limit)"
    )


def test_a_json_worker_whose_compiler_runs_out_of_memory_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "1")
    name = _json_worker(
        tmp_path,
        "greedy_jax",
        "    import jax.numpy as jnp\n"
        "    return {'ok': True, 'n': float((jnp.ones((2**29,), jnp.float32) + 1).sum())}",
    )
    with pytest.raises(ShardscopeError, match=r"ran out of memory \(limit 1 GB\)"):
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120, devices=2)


def test_a_json_worker_whose_threads_no_longer_fit_is_out_of_memory(tmp_path, monkeypatch):
    # 64 fake devices start more threads than 1 GB holds stacks for: XLA aborts.
    monkeypatch.setenv(MEMORY_ENV, "1")
    name = _json_worker(
        tmp_path,
        "many_threads",
        "    import jax.numpy as jnp\n"
        "    return {'ok': True, 'n': float((jnp.ones((2**29,), jnp.float32) + 1).sum())}",
    )
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120, devices=64)
    assert str(caught.value).startswith("the count ran out of memory (limit 1 GB)")


def test_a_json_worker_killed_after_hitting_its_limit_is_out_of_memory(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "2")
    name = _json_worker(
        tmp_path,
        "aborted",
        "    import os\n"
        "    print(\"terminate called after throwing an instance of 'std::bad_alloc'\",\n"
        "          file=sys.stderr, flush=True)\n"
        "    os.abort()",
    )
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == (
        f"the count ran out of memory (limit 2 GB); allow more with {MEMORY_ENV}=4 (0: no limit)"
    )


@pytest.mark.parametrize("timeout", [-1.0, 0.0, float("nan"), float("inf"), 1e308, None])
def test_a_job_refuses_a_time_limit_no_clock_can_keep(tmp_path, timeout):
    with pytest.raises(ShardscopeError, match="give e.g. --timeout 300"):
        _job(tmp_path, "anything", timeout=timeout)


def test_cancel_workers_ends_a_running_worker_at_once(tmp_path):
    name = _module(tmp_path, "stuck", "import time\ntime.sleep(600)\n")
    cancel = threading.Timer(1.0, cancel_workers)
    cancel.start()
    begin = time.monotonic()
    try:
        code = run_worker(_job(tmp_path, name, timeout=300))
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


def _staged(tmp_path, first_s, then_s):
    """A worker that sleeps ``first_s``, writes the stage file, then sleeps ``then_s``."""
    done = tmp_path / "stage_done"
    name = _module(
        tmp_path,
        "staged",
        f"import pathlib, time\ntime.sleep({first_s})\n"
        f"pathlib.Path({str(done)!r}).write_text('')\ntime.sleep({then_s})\n",
    )
    return name, done


def test_a_first_stage_and_the_rest_each_get_their_own_time(tmp_path):
    name, done = _staged(tmp_path, 1.5, 1.5)
    job = _job(tmp_path, name, timeout=2.5, first_stage=FirstStage(done, 2.5))
    assert run_worker(job) == 0  # 3 s in all, each stage under its 2.5 s


def test_a_worker_past_its_first_stage_is_killed_and_says_so(tmp_path):
    name, done = _staged(tmp_path, 60, 0)
    started = time.monotonic()
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(_job(tmp_path, name, timeout=60, first_stage=FirstStage(done, 1)))
    assert time.monotonic() - started < 30
    assert caught.value.first_stage and caught.value.timeout == 1


def test_a_worker_past_its_time_after_the_first_stage_is_killed(tmp_path):
    name, done = _staged(tmp_path, 0, 60)
    with pytest.raises(WorkerTimeout) as caught:
        run_worker(_job(tmp_path, name, timeout=1, first_stage=FirstStage(done, 60)))
    assert not caught.value.first_stage and caught.value.timeout == 1


def test_a_worker_that_dies_in_its_first_stage_is_reported_at_once(tmp_path):
    name = _module(tmp_path, "dies", "import os\nos._exit(3)\n")
    started = time.monotonic()
    job = _job(tmp_path, name, timeout=60, first_stage=FirstStage(tmp_path / "never", 60))
    assert run_worker(job) == 3
    assert time.monotonic() - started < 10


def test_a_json_worker_past_its_first_stage_raises_the_timeout_for_the_caller(tmp_path):
    name = _module(
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


def _fork_in_fresh_process(tmp_path, name, *, timeout=60.0):
    """``run_worker`` of module ``name`` with ``fork=True``, from a fresh single-threaded
    process (as the CLI forks its run worker); what it printed: the code or the timeout."""
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from shardscope.backend.isolation.jobs import (\n"
        "    WorkerJob, WorkerTimeout, can_fork, run_worker)\n"
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
    name = _module(
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
    name = _module(tmp_path, "raises", "raise ValueError('the worker failed')\n")
    assert _fork_in_fresh_process(tmp_path, name) == "1"
    assert last_line((tmp_path / "log.txt").read_text()) == "ValueError: the worker failed"
    name = _module(tmp_path, "exits", "import sys\nsys.exit(7)\n")
    assert _fork_in_fresh_process(tmp_path, name) == "7"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_a_forked_worker_forks_ends_with_it_and_at_its_time_limit(tmp_path):
    name = _module(tmp_path, "forker", _FORKER)
    assert _fork_in_fresh_process(tmp_path, name) == "0"
    assert gone_within(int((tmp_path / "child.pid").read_text()), 5)
    name = _module(tmp_path, "forker_sleeps", _FORKER + "time.sleep(600)\n")
    assert _fork_in_fresh_process(tmp_path, name, timeout=3) == "timeout"
    assert gone_within(int((tmp_path / "child.pid").read_text()), 5)


def test_this_test_process_may_not_fork_workers():
    import jax  # noqa: F401 - a process with JAX imported, as the window's

    assert not can_fork()


_KILLS_PARENT = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the worker proper from its relay")
def test_a_worker_that_kills_its_parent_leaves_the_process_that_started_it_standing(tmp_path):
    name = _module(tmp_path, "kills_parent", _KILLS_PARENT)
    # From a process of its own, which prints how each job ended: a worker whose parent it
    # were would kill it.
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from shardscope.backend.isolation.jobs import (\n"
        "    KilledItsParent, WorkerJob, run_command, run_worker)\n"
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
    name = _module(tmp_path, "aborts", "import os\nos.abort()\n")
    assert run_worker(_job(tmp_path, name)) == -signal.SIGABRT
    name = _module(tmp_path, "exits", "import os\nos._exit(137)\n")
    assert run_worker(_job(tmp_path, name)) == 137
    code = run_command(
        ["sh", "-c", "kill -TERM $$"], env=dict(os.environ), cwd=tmp_path, timeout=60
    )
    assert code == -signal.SIGTERM


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
