"""JSON workers: reports, failures, crashes, time limits, running out of memory."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.json_worker import exception_text, run_json_worker
from shardscope.backend.isolation.limits import MEMORY_ENV
from tests.support.workers import json_worker_module, worker_module


def test_a_json_worker_reports_with_its_devices(tmp_path):
    name = json_worker_module(
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
    name = json_worker_module(
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
    name = json_worker_module(tmp_path, "unhappy", "    return {'ok': False}")
    with pytest.raises(ShardscopeError, match="^the count failed$"):
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)


def test_a_json_worker_that_crashes_quotes_its_stderr(tmp_path):
    name = json_worker_module(
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
    name = worker_module(tmp_path, "silent", "import sys\nsys.exit(4)\n")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == "the count crashed: its worker exited with status 4"


def test_a_json_worker_past_its_time_names_the_fix(tmp_path):
    name = json_worker_module(tmp_path, "slow", "    import time\n    time.sleep(60)")
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=1.5)
    assert str(caught.value) == "the count did not finish within 1.5 s; allow more with --timeout"


# A worker that forks a child which would sleep for ten minutes; both write their pids.


def test_a_json_worker_out_of_memory_says_so_and_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "0.5")
    name = json_worker_module(
        tmp_path, "greedy", "    return {'ok': True, 'n': len(bytearray(2**31))}"
    )
    with pytest.raises(ShardscopeError) as caught:
        run_json_worker(name, {}, what="the count", cwd=tmp_path, timeout=120)
    assert str(caught.value) == (
        "counting failed: the worker ran out of memory (limit 0.5 GB); "
        f"allow more with {MEMORY_ENV}=1 (0: no limit)"
    )


def test_a_json_worker_whose_compiler_runs_out_of_memory_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "1")
    name = json_worker_module(
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
    name = json_worker_module(
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
    name = json_worker_module(
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
