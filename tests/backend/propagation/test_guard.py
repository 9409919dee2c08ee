"""Passes tried in a forked child first: a crash there is reported, never suffered here."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.propagation import guard
from shardscope.backend.propagation.pipeline import pipeline_stages
from shardscope.backend.propagation.propagate import prepare, propagate
from tests.support.inputs import MLIR

CRASH = (MLIR / "sdy_origins_crash.mlir").read_text()
MESH = {"data": 4, "model": 2}
SPECS = {"x": "data,_"}


def test_a_crash_in_the_child_is_reported_and_leaves_the_module_as_it_was():
    prep = prepare(CRASH, MESH, SPECS)
    before = str(prep.module)
    crash = guard.probe(prep.module, pipeline_stages(True))
    assert crash is not None and "SIGSEGV" in crash.describe()
    assert str(prep.module) == before
    assert guard.probe(prep.module, pipeline_stages(False)) is None


def test_propagation_goes_on_without_origins_and_warns():
    result = propagate(CRASH, MESH, SPECS)
    assert "origins off" in result.route
    assert result.warnings and "crashed" in result.warnings[0]
    assert result.value("x").spec == [["data"], []]


def test_a_clean_module_keeps_its_origins():
    result = propagate((MLIR / "sdy.mlir").read_text(), MESH)
    assert "origins on" in result.route and result.warnings == []


def test_a_child_that_hangs_is_killed_at_its_limit(monkeypatch):
    prep = prepare(CRASH, MESH, SPECS)
    monkeypatch.setattr(guard, "_child", lambda *args: __import__("time").sleep(60))
    with pytest.raises(ShardscopeError, match="did not finish within 0.2 s"):
        guard.probe(prep.module, ["builtin.module()"], timeout=0.2)


def test_a_crash_with_and_without_origins_is_one_line(monkeypatch):
    from shardscope.backend.propagation import propagate as propagate_module

    monkeypatch.setattr(
        propagate_module, "probe", lambda *a, **k: guard.ProbeCrash("killed by SIGSEGV", None)
    )
    with pytest.raises(
        ShardscopeError, match=r"^Shardy crashed on this program \(killed by SIGSEGV\)"
    ):
        propagate(CRASH, MESH, SPECS)
