"""Worker processes: environment, fake devices, time limits, crash reports, JSON workers."""

import os
import signal
import time

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.jobs import (
    Crash,
    WorkerJob,
    WorkerTimeout,
    last_line,
    run_json_worker,
    run_worker,
    worker_env,
)


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
    pid = int((tmp_path / "log.txt").read_text().split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


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


def test_a_json_worker_failure_is_one_line(tmp_path):
    name = _json_worker(tmp_path, "failing", "    raise ValueError('bad job\\nmore detail')")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == "counting failed: ValueError: bad job"


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
    assert str(caught.value) == "the count crashed (Fatal: out of luck)"


def test_a_silent_json_worker_crash_names_the_exit_status(tmp_path):
    name = _module(tmp_path, "silent", "import sys\nsys.exit(4)\n")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == "the count crashed (exit status 4)"


def test_a_json_worker_past_its_time_names_the_fix(tmp_path):
    name = _json_worker(tmp_path, "slow", "    import time\n    time.sleep(60)")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=1.5)
    assert str(caught.value) == "the count did not finish within 1.5 s; allow more with --timeout"
