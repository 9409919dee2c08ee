"""``capture --hosts 2``: a script run as two processes joined by JAX's distributed runtime,
what process 0 compiled, and the host at fault when one fails or falls behind."""

import signal
import sys
import uuid

import pytest

from shardscope.backend.errors import ProgramError
from shardscope.backend.program.capture import capture_script
from shardscope.backend.program.capture_file import parse_capture
from shardscope.backend.program.capture_hosts import (
    LAG,
    HostEnd,
    blame,
    folder_of,
    free_port,
    host_env,
)
from shardscope.backend.program.load import load_program
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.session.persistence import write_json
from tests.test_hostile import MARKER, _marked_pids

TRAIN = "tests/inputs/hosts/train.py"
FAULTS = "tests/inputs/hosts/faults.py"


@pytest.fixture(scope="module")
def captured():
    return capture_script([sys.executable, TRAIN, "2"], hosts=2)


@pytest.mark.slow
def test_two_hosts_record_process_0s_functions_with_the_global_mesh(captured):
    assert captured.hosts == 2 and captured.devices == 8 and captured.ended == "finished"
    by_name = {f.name: f for f in captured.functions}
    assert set(by_name) == {"matmul", "loss"}
    assert by_name["matmul"].mesh == {"data": 2, "model": 4}
    assert by_name["matmul"].calls == 2 and by_name["loss"].calls == 2
    # the module is the global program: 16 rows over both hosts, 32 columns over 8 devices
    assert "tensor<16x16xf32>" in by_name["matmul"].mlir
    assert "mhlo.num_partitions = 8" in by_name["matmul"].mlir
    assert captured.warnings == []


@pytest.mark.slow
def test_a_two_host_capture_loads_and_propagates_knowing_its_hosts(captured, tmp_path):
    path = tmp_path / "cap.json"
    write_json(path, captured.to_json())
    assert parse_capture(path.read_text(), "cap.json").hosts == 2
    program = load_program(f"{path}#matmul")
    assert program.hosts == 2 and program.mesh == {"data": 2, "model": 4}
    specs = {v.name: v.spec for v in propagate(program, None, {}).values if v.name}
    assert specs["x"] == [["data"], []] and specs["w"] == [[], ["model"]]


@pytest.mark.slow
def test_a_script_that_never_joins_is_told_to_call_initialize():
    with pytest.raises(ProgramError) as info:
        capture_script([sys.executable, FAULTS, "no-init"], hosts=2)
    message = str(info.value)
    assert "\n" not in message
    assert "used JAX's devices before calling jax.distributed.initialize()" in message
    assert "each of its 2 processes must call jax.distributed.initialize()" in message


@pytest.mark.slow
def test_a_raising_host_ends_the_capture_at_once_naming_it(monkeypatch):
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    with pytest.raises(ProgramError, match="on 2 hosts: host 1 raised ValueError: host one broke$"):
        capture_script([sys.executable, FAULTS, "raise"], hosts=2, timeout=120)
    assert _marked_pids(marker) == []


@pytest.mark.slow
def test_a_host_that_hangs_is_named_at_the_time_limit_and_nothing_is_left(monkeypatch):
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    with pytest.raises(ProgramError) as info:
        capture_script([sys.executable, FAULTS, "hang"], hosts=2, timeout=8)
    assert str(info.value).endswith(
        "host 1 fell behind: after 8 s (--timeout) it had not called "
        "jax.distributed.initialize(), while host 0 was waiting in "
        "jax.distributed.initialize() for the others"
    )
    assert _marked_pids(marker) == []


@pytest.mark.slow
def test_a_host_that_exits_with_a_status_ends_the_capture_at_once_naming_it(monkeypatch):
    # Host 0 sleeps, its heartbeats going on: only host 1's exit, not the time limit, can
    # end the capture with host 1's status.
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    with pytest.raises(ProgramError) as info:
        capture_script([sys.executable, FAULTS, "exit"], hosts=2, timeout=120)
    assert str(info.value).endswith("on 2 hosts: host 1 exited with status 3 (host one gives up)")
    assert _marked_pids(marker) == []


@pytest.mark.slow
def test_a_host_still_running_long_after_its_peer_finished_is_ended_and_named(monkeypatch):
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    with pytest.raises(ProgramError) as info:
        capture_script([sys.executable, FAULTS, "lag"], hosts=2, timeout=300)
    assert str(info.value).endswith(
        f"on 2 hosts: host 0 fell behind: it was still running {LAG:g} s after host 1 "
        "finished its script (host 0 had made 2 runs of its jitted functions, while host 1 "
        "had made 2 runs of its jitted functions and was exiting)"
    )
    assert _marked_pids(marker) == []


@pytest.mark.slow
def test_hosts_that_compiled_other_modules_are_warned_of():
    captured = capture_script([sys.executable, FAULTS, "other"], hosts=2)
    assert [f.name for f in captured.functions] == ["step"]
    (warning,) = captured.warnings
    assert warning.startswith("host 1 compiled other modules than host 0 (jit__lambda)")


@pytest.mark.parametrize(
    ("hosts", "devices"), [(3, 8), (0, 8), (65, 4096)], ids=["not-dividing", "zero", "too-many"]
)
def test_a_host_count_that_cannot_split_the_devices_is_refused(hosts, devices):
    with pytest.raises(ProgramError, match=f"--hosts {hosts}: give a whole number from 1 to 64"):
        capture_script([sys.executable, TRAIN], hosts=hosts, devices=devices)


def test_each_host_gets_the_coordinator_its_index_and_a_folder_of_its_own(tmp_path):
    port = free_port()
    assert 0 < port < 65536
    env = host_env({"PATH": "/bin"}, tmp_path, 1, 2, port)
    assert env["JAX_COORDINATOR_ADDRESS"] == env["JAX_COORDINATOR_BIND_ADDRESS"]
    assert env["JAX_COORDINATOR_ADDRESS"] == f"127.0.0.1:{port}"
    assert (env["JAX_NUM_PROCESSES"], env["JAX_PROCESS_ID"]) == ("2", "1")
    assert env["SHARDSCOPE_CAPTURE_DIR"] == str(folder_of(tmp_path, 1))
    assert env["JAX_DUMP_IR_TO"] == str(folder_of(tmp_path, 1) / "dump")
    assert env["PATH"] == "/bin"


def end(host, status, at=None, *, tail=(), stage="joined", calls=0, error=None, done=None):
    state = {"distributed": stage, **({"error": error} if error else {})}
    return HostEnd(host, status, at, list(tail), state, calls, done)


PEER_LOST = "jax.errors.JaxRuntimeError: INTERNAL: Connection closed by peer [127.0.0.1]:4"
ABORTED = (
    "F1202 12:25:48.879871 7990 client.h:80] Terminating process because the JAX "
    "distributed service detected fatal errors."
)


def test_the_first_host_that_failed_by_itself_is_blamed_not_the_peer_that_lost_it():
    raised = {"kind": "raised", "reason": PEER_LOST}
    ends = [end(0, 1, 0.3, error=raised), end(1, -signal.SIGKILL, 0.2, tail=["last words"])]
    assert blame(ends, False, 600, False) == ("failed", "host 1 was killed by SIGKILL")
    # a peer's loss is never blamed on the host that saw it, even when it ended first
    ends = [end(0, 1, 0.1, error=raised), end(1, 2, 0.2, tail=["bad input"])]
    assert blame(ends, False, 600, False) == ("failed", "host 1 exited with status 2 (bad input)")


def test_a_host_left_running_when_its_peer_gave_up_on_it_stopped_responding():
    ends = [end(0, -signal.SIGABRT, 9.0, tail=[ABORTED, "    @ 0x7fa7 (unknown)"]), end(1, None)]
    ended, fault = blame(ends, False, 600, False)
    assert ended == "failed" and fault.startswith(
        "host 1 stopped responding: host 0 failed waiting for it (Terminating process because"
    )


def test_at_the_time_limit_hosts_in_step_stopped_and_hosts_out_of_step_name_the_one_behind():
    in_step = [end(0, None, calls=5), end(1, None, calls=5)]
    assert blame(in_step, True, 30, False) == ("stopped after 30 s (--timeout)", None)
    behind = [end(0, None, calls=5), end(1, None, calls=2)]
    assert blame(behind, True, 30, False) == (
        "failed",
        "host 1 fell behind: after 30 s (--timeout) it had made 2 runs of its jitted "
        "functions, while host 0 had made 5 runs of its jitted functions",
    )


def test_steps_and_finishing_end_a_run_without_blame():
    lost = {"kind": "raised", "reason": PEER_LOST}
    after_steps = [end(0, 0, 1.0), end(1, 1, 1.1, error=lost)]
    assert blame(after_steps, False, 600, True) == ("stopped after --steps", None)
    assert blame([end(0, 0, 1.0), end(1, 0, 1.0)], False, 600, False) == ("finished", None)


def test_a_reason_every_host_gave_is_said_once():
    error = {"kind": "no-initialize", "reason": "the script used JAX's devices before ..."}
    ends = [end(0, 3, 0.1, error=error), end(1, 3, 0.1, error=error)]
    assert blame(ends, False, 600, False) == (
        "failed",
        "the script used JAX's devices before ... (every host)",
    )


def test_hosts_ended_for_falling_behind_a_finished_peer_name_the_one_behind():
    ends = [end(0, None, calls=1), end(1, None, calls=4, stage="exiting", done=3.0)]
    assert blame(ends, False, 600, False, lagged=True) == (
        "failed",
        f"host 0 fell behind: it was still running {LAG:g} s after host 1 finished its "
        "script (host 0 had made 1 run of its jitted functions, while host 1 had made 4 "
        "runs of its jitted functions and was exiting)",
    )
    # a host that ended without joining leaves the others waiting for it: it is at fault
    ends = [end(0, None, stage="joining"), end(1, 0, 0.5, stage="not called", done=0.5)]
    assert blame(ends, False, 600, False, lagged=True) == (
        "failed",
        "host 1 ended its script without joining the others (it had not called "
        "jax.distributed.initialize()), while host 0 was waiting in "
        "jax.distributed.initialize() for the others",
    )
    # a host that finished with fewer runs than a peer left it waiting: it is at fault
    ends = [end(0, None, calls=2), end(1, None, calls=1, stage="exiting", done=3.0)]
    assert blame(ends, False, 600, False, lagged=True) == (
        "failed",
        "host 1 ended its script early: it had made 1 run of its jitted functions and was "
        "exiting, while host 0 had made 2 runs of its jitted functions and was still "
        f"running {LAG:g} s later",
    )
    # every host finished its script, one never ended: stuck at JAX's shutdown
    ends = [end(0, 0, 2.0, stage="exiting", done=1.0), end(1, None, stage="exiting", done=1.5)]
    assert blame(ends, False, 600, False, lagged=True) == (
        "failed",
        f"host 1 did not end within {LAG:g} s of every host finishing its script (it "
        "waited at JAX's shutdown)",
    )


GLOO = "[Gloo] Rank 1 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1"


def test_a_hosts_last_words_are_its_stderrs_not_the_runtimes_notices():
    # its stdout (flushed at exit) came after what it said on stderr
    host = end(1, 3, 1.0, tail=["host one gives up", "53.8", GLOO])
    host.stderr = ["host one gives up"]
    assert host.reason() == "host 1 exited with status 3 (host one gives up)"
    # without a stderr line of its own, gloo's notices are passed over in its output
    quiet = end(1, 3, 1.0, tail=["step 2 of 5", GLOO, GLOO])
    assert quiet.reason() == "host 1 exited with status 3 (step 2 of 5)"
