"""The capture hook of one process of ``capture --hosts 2``: a script that uses devices
before joining, passes another process id or count, or raises, ends at once with its
reason recorded (the two-process runs are in tests/backend/program/test_capture_hosts.py)."""

import json
import os
import subprocess
import sys

import pytest

from shardscope.backend.program.capture import SITE


def run_host(tmp_path, code, *, host=1, hosts=2):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(SITE))
    env.pop("SHARDSCOPE_CAPTURE_STEPS", None)
    env.update(
        SHARDSCOPE_CAPTURE_DIR=str(tmp_path),
        SHARDSCOPE_CAPTURE_HOSTS=str(hosts),
        SHARDSCOPE_CAPTURE_HOST=str(host),
        JAX_COORDINATOR_ADDRESS="127.0.0.1:1",
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    return proc, json.loads((tmp_path / "functions.json").read_text())


@pytest.mark.slow
def test_using_devices_before_joining_ends_the_process_with_the_fix(tmp_path):
    proc, state = run_host(tmp_path, "import jax\nprint(jax.devices())\nprint('went on')")
    assert proc.returncode == 3 and "went on" not in proc.stdout
    assert state["host"] == 1 and state["hosts"] == 2 and state["distributed"] == "not called"
    assert state["error"]["kind"] == "no-initialize"
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("shardscope capture, host 1: the script used JAX's devices before")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("call", "said"),
    [
        ("num_processes=3", "passed num_processes=3 to jax.distributed.initialize()"),
        ("process_id=0", "passed process_id=0 to jax.distributed.initialize()"),
    ],
)
def test_another_process_count_or_id_than_captures_is_refused_before_joining(tmp_path, call, said):
    proc, state = run_host(tmp_path, f"import jax\njax.distributed.initialize({call})")
    assert proc.returncode == 3, proc.stderr
    assert state["error"]["kind"] == "arguments" and said in state["error"]["reason"]
    assert state["distributed"] == "not called"
    assert "leave it out (capture fills it in)" in proc.stderr


@pytest.mark.slow
def test_an_uncaught_exception_is_printed_recorded_and_ends_the_process(tmp_path):
    code = "import atexit, jax\natexit.register(print, 'at exit')\nraise ValueError('boom')"
    proc, state = run_host(tmp_path, code)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "ValueError: boom" in proc.stderr
    assert state["error"] == {"kind": "raised", "reason": "ValueError: boom"}
    # ended at once: the exit handlers (JAX's shutdown barrier among them) never ran
    assert "at exit" not in proc.stdout


@pytest.mark.slow
def test_one_host_captures_change_nothing(tmp_path):
    proc, state = run_host(tmp_path, "import jax\nprint(len(jax.devices()))", hosts=1)
    assert proc.returncode == 0 and int(proc.stdout) >= 1
    assert "host" not in state and "error" not in state


@pytest.mark.slow
def test_sys_exit_keeps_its_meaning_caught_or_not(tmp_path):
    code = (
        "import sys, jax\n"
        "try:\n    sys.exit(5)\nexcept SystemExit as e:\n    print(e.code, isinstance(e, SystemExit))\n"
        "sys.exit('gave up')"
    )
    proc, state = run_host(tmp_path, code)
    assert proc.returncode == 1 and proc.stdout.split() == ["5", "True"]
    assert proc.stderr.strip().splitlines()[-1] == "gave up"
    # not joined: no JAX shutdown barrier to skip, so nothing of the exit is recorded
    assert "error" not in state and state["distributed"] == "not called"
