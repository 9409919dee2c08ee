"""Cancel groups: cancelling one group's workers leaves another group's running."""

import signal
import threading
import time

import pytest

from shardscope.backend.isolation.jobs import run_worker
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.isolation.registry import GroupCancelled, WorkerRegistry
from shardscope.backend.isolation.worker_job import WorkerJob

# A JSON worker that waits for the file ``release`` in its folder, then reports twice its
# job's ``n``: it is surely running while the test cancels the other group.
_WAITER = """\
import sys, time
from pathlib import Path
from shardscope.backend.isolation.json_worker import json_worker_main

def work(job, scratch):
    while not Path(job["release"]).exists():
        time.sleep(0.01)
    return {"ok": True, "value": job["n"] * 2}

sys.exit(json_worker_main(sys.argv[1:], work, failure="waiting failed"))
"""


def _start(tmp_path, group, n, outcomes):
    def job():
        try:
            report = run_json_worker(
                "waiter",
                {"n": n, "release": str(tmp_path / "release")},
                what=f"job {n}",
                cwd=tmp_path,
                timeout=120,
                group=group,
            )
            outcomes[n] = report["value"]
        except Exception as exc:  # noqa: BLE001 - the test compares what each job ended with
            outcomes[n] = exc

    thread = threading.Thread(target=job)
    thread.start()
    return thread


def _wait_until(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_cancelling_one_group_leaves_the_other_groups_jobs_to_finish(tmp_path):
    (tmp_path / "waiter.py").write_text(_WAITER)
    registry = WorkerRegistry()
    kept, cancelled = registry.group("the kept jobs"), registry.group("the cancelled jobs")
    outcomes: dict[int, object] = {}
    threads = [_start(tmp_path, kept, n, outcomes) for n in (1, 2)]
    threads += [_start(tmp_path, cancelled, n, outcomes) for n in (3, 4)]
    try:
        _wait_until(lambda: len(registry.workers) == 4)
        cancelled.cancel()
        for thread in threads[2:]:
            thread.join(timeout=30)
        # The cancelled group's jobs ended while the kept group's still wait to be released.
        assert all(isinstance(outcomes.get(n), GroupCancelled) for n in (3, 4)), outcomes
        assert 1 not in outcomes and 2 not in outcomes
        assert len(registry.workers) == 2
        assert {w.group for w in registry.workers.values()} == {kept}
    finally:
        (tmp_path / "release").write_text("")
        for thread in threads:
            thread.join(timeout=60)
    assert outcomes[1] == 2 and outcomes[2] == 4
    assert not registry.workers


def test_a_cancelled_group_starts_no_new_job_and_other_groups_still_do(tmp_path):
    (tmp_path / "waiter.py").write_text(_WAITER)
    (tmp_path / "release").write_text("")
    registry = WorkerRegistry()
    gone, other = registry.group("the gone jobs"), registry.group("the other jobs")
    gone.cancel()
    job = {"n": 5, "release": str(tmp_path / "release")}
    with pytest.raises(GroupCancelled, match="the jobs of the gone jobs were cancelled"):
        run_json_worker("waiter", job, what="job", cwd=tmp_path, timeout=120, group=gone)
    report = run_json_worker("waiter", job, what="job", cwd=tmp_path, timeout=120, group=other)
    assert report["value"] == 10


def test_cancelling_every_worker_kills_every_group_but_refuses_no_new_job(tmp_path):
    (tmp_path / "waiter.py").write_text(_WAITER)
    registry = WorkerRegistry()
    first, second = registry.group("first"), registry.group("second")
    outcomes: dict[int, object] = {}
    threads = [_start(tmp_path, first, 1, outcomes), _start(tmp_path, second, 2, outcomes)]
    _wait_until(lambda: len(registry.workers) == 2)
    registry.cancel_all()
    for thread in threads:
        thread.join(timeout=30)
    # Killed, not cancelled by group: each job reports its worker's death.
    assert all("killed by SIGKILL" in str(outcomes[n]) for n in (1, 2)), outcomes
    (tmp_path / "release").write_text("")
    job = {"n": 3, "release": str(tmp_path / "release")}
    report = run_json_worker("waiter", job, what="job", cwd=tmp_path, timeout=120, group=first)
    assert report["value"] == 6


def test_an_interrupt_kills_every_group_and_refuses_every_new_job(tmp_path):
    (tmp_path / "stuck.py").write_text("import time\ntime.sleep(600)\n")
    registry = WorkerRegistry()
    group = registry.group("the stuck jobs")
    job = WorkerJob("stuck", (), tmp_path, tmp_path / "log.txt", 300.0, group=group)
    timer = threading.Timer(1.0, registry.interrupt)
    timer.start()
    try:
        # Killed by the interrupt, not by its group's cancel: its exit code, as before.
        assert run_worker(job) == -signal.SIGKILL
    finally:
        timer.cancel()
    assert registry.interrupted() and not group.cancelled
    with pytest.raises(KeyboardInterrupt):
        run_worker(job)
