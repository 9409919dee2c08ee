"""Compiler work in a forked child: its result comes back, its crash never reaches us."""

import os
import signal

import pytest

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.propagation import guard
from shardscope.backend.propagation import propagate as propagate_module
from shardscope.backend.propagation.propagate import propagate
from tests.support.inputs import MLIR

CRASH = (MLIR / "sdy_origins_crash.mlir").read_text()
MESH = {"data": 4, "model": 2}
SPECS = {"x": "data,_"}


def test_the_childs_result_and_exceptions_come_back():
    assert guard.run_forked(lambda: {"pid": os.getpid()})["pid"] != os.getpid()

    def refuse():
        raise SpecError("no such axis")

    with pytest.raises(SpecError, match="no such axis"):
        guard.run_forked(refuse)


def test_a_child_that_dies_is_reported_with_its_last_line():
    def die():
        os.write(2, b"LLVM ERROR: unknown axis name: dp\n")
        os.kill(os.getpid(), signal.SIGABRT)

    with pytest.raises(guard.ChildCrashed) as info:
        guard.run_forked(die)
    assert str(info.value) == "killed by SIGABRT (LLVM ERROR: unknown axis name: dp)"


def test_a_child_that_hangs_is_killed_at_its_limit():
    with pytest.raises(ShardscopeError, match="did not finish within 0.2 s"):
        guard.run_forked(lambda: __import__("time").sleep(60), timeout=0.2)


def test_the_module_that_crashes_shardy_propagates_and_says_what_is_missing():
    # Shardy segfaults on this module in some runs with origins on, never here.
    for _ in range(4):
        result = propagate(CRASH, MESH, SPECS)
        assert result.value("x").spec == [["data"], []]
        assert ("origins off" in result.route) == bool(result.warnings)


class _Crashed:
    """A forked child that died without a result."""

    def result(self, timeout=None):
        raise guard.ChildCrashed("killed by SIGSEGV", None)

    def cancel(self):
        pass


def test_a_crash_with_origins_falls_back_to_none_and_warns(monkeypatch):
    monkeypatch.setattr(propagate_module, "start_forked", lambda work: _Crashed())
    result = propagate(CRASH, MESH, SPECS)
    assert "origins off" in result.route and "crashed" in result.warnings[0]
    assert result.graph is not None and result.value("x").spec == [["data"], []]


def test_a_crash_with_and_without_origins_is_one_line(monkeypatch):
    def crash(work, **kwargs):
        raise guard.ChildCrashed("killed by SIGSEGV", None)

    monkeypatch.setattr(propagate_module, "start_forked", lambda work: _Crashed())
    monkeypatch.setattr(propagate_module, "run_forked", crash)
    with pytest.raises(
        ShardscopeError, match=r"^Shardy crashed on this program \(killed by SIGSEGV\); "
    ):
        propagate(CRASH, MESH, SPECS)


def test_a_started_propagation_runs_while_the_caller_goes_on_and_can_be_cancelled():
    pending = propagate_module.start_propagation(CRASH, MESH, SPECS)
    assert pending.result().value("x").spec == [["data"], []]
    pending = propagate_module.start_propagation(CRASH, MESH, SPECS)
    pid = pending._child.pid
    pending.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left


def test_a_clean_module_keeps_its_origins():
    result = propagate((MLIR / "sdy.mlir").read_text(), MESH)
    assert "origins on" in result.route and result.warnings == ()


# A torch_xla Megatron-style training step (tests/inputs/torch/megatron_step.py's first
# graph, locations left out): jaxlib 0.10.2's Shardy segfaults recording its propagation
# edges on it, with origins on or off.
EDGES_CRASH = MLIR / "sdy_edges_crash.mlir"


def test_a_module_shardy_crashes_on_recording_its_edges_propagates_without_steps():
    result = propagate(EDGES_CRASH.read_text(), {"data": 2, "model": 4})
    assert result.route.endswith("(debug edges and origins off)")
    assert "crashed recording its propagation steps" in result.warnings[0]
    assert result.timeline.steps and not any(s.recorded for s in result.timeline.steps)
    # the final shardings are Shardy's: the weights keep the specs the script gave them
    sharded = [v for v in result.values if v.role == "arg" and any(v.spec)]
    assert sharded


def test_a_crash_recording_edges_too_falls_back_to_neither(monkeypatch):
    calls = []

    def crash_once(work, **kwargs):
        calls.append(work)
        if len(calls) == 1:
            raise guard.ChildCrashed("killed by SIGSEGV", None)
        return work()

    monkeypatch.setattr(propagate_module, "start_forked", lambda work: _Crashed())
    monkeypatch.setattr(propagate_module, "run_forked", crash_once)
    result = propagate(CRASH, MESH, SPECS)
    assert len(calls) == 2 and result.route.endswith("(debug edges and origins off)")
    assert result.value("x").spec == [["data"], []]
