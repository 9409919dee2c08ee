"""Cancel: a run cancelled from another thread, before its worker starts or while it runs,
raises RunCancelled, and its worker and all it started are gone."""

import os
import threading
import time

import pytest

from shardscope.backend.program.load import load_program
from shardscope.backend.run.cancel import CANCELLED, Cancel, RunCancelled
from shardscope.backend.run.dispatch import run_program
from tests.support.inputs import INPUTS

HOSTILE = INPUTS / "hostile"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_run_cancelled_before_it_starts_never_starts():
    program = load_program("example:mlp")
    cancel = Cancel()
    cancel.cancel()
    started = time.monotonic()
    with pytest.raises(RunCancelled, match=CANCELLED):
        run_program(program, cancel=cancel, timeout=60)
    assert time.monotonic() - started < 10
    assert cancel._folder is None or not (cancel._folder / "pid").exists()


@pytest.mark.slow
def test_cancelling_a_hanging_run_kills_its_worker_and_what_it_started():
    program = load_program(str(HOSTILE / "run_hangs.py"))
    cancel = Cancel()
    raised: list[BaseException] = []

    def run() -> None:
        try:
            run_program(program, cancel=cancel, timeout=120)
        except BaseException as exc:  # noqa: BLE001 - the test reads what was raised
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        folder = cancel._folder
        if folder is not None and (folder / "pid").exists():
            break
        time.sleep(0.05)
    else:
        pytest.fail("the worker never started")
    pid = int((folder / "pid").read_text())
    time.sleep(1.0)  # the program is running (it hangs at run time)
    cancel.cancel()
    thread.join(30)
    assert not thread.is_alive(), "the run did not end once cancelled"
    assert len(raised) == 1 and isinstance(raised[0], RunCancelled), raised
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the worker outlived its cancel"
