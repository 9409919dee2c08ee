"""Worker limits: memory and time."""

import os

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.isolation.jobs import run_worker
from shardscope.backend.isolation.limits import MEMORY_ENV, memory_limit
from tests.support.workers import worker_job, worker_module


def test_workers_have_the_memory_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "3")
    name = worker_module(
        tmp_path, "limits", "import resource\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0])\n"
    )
    assert run_worker(worker_job(tmp_path, name)) == 0
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


@pytest.mark.parametrize("timeout", [-1.0, 0.0, float("nan"), float("inf"), 1e308, None])
def test_a_job_refuses_a_time_limit_no_clock_can_keep(tmp_path, timeout):
    with pytest.raises(ShardscopeError, match="give e.g. --timeout 300"):
        worker_job(tmp_path, "anything", timeout=timeout)
