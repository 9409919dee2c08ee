"""The compile worker: an annotated module compiled on fake CPU devices (the test process
has 64), its collectives and XLA's memory analysis."""

from __future__ import annotations

from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.run.compile import MEMORY_FIELDS, compile_job
from tests.support.compile_oracle import loaded


def test_the_annotated_mlp_compiles_to_one_all_reduce_over_model(tmp_path):
    prep = prepare(loaded("example:mlp"), keep_annotated=True)
    report = compile_job({"module": prep.annotated_text, "devices": 8}, tmp_path)
    assert report["ok"] and report["device_assignment"] == list(range(8))
    kinds = [(c["kind"], c["groups"]) for c in report["collectives"]]
    assert kinds == [("all-reduce", [[0, 1], [2, 3], [4, 5], [6, 7]])]
    assert set(report["memory"]) == set(MEMORY_FIELDS)
    memory = report["memory"]
    assert memory["argument"] > 0 and memory["peak"] >= memory["temp"]
    assert report["hlo_text"].startswith("HloModule")


def test_the_annotated_text_keeps_locations_and_calls():
    prep = prepare(loaded("example:mlp"), keep_annotated=True)
    assert 'loc("x")' in prep.annotated_text and "sdy.mesh @mesh" in prep.annotated_text
    assert prepare(loaded("example:mlp")).annotated_text is None
