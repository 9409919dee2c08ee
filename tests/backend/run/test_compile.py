"""The compile worker: an annotated module compiled on fake CPU devices (the test process
has 64), its collectives and XLA's memory analysis."""

from __future__ import annotations

from pathlib import Path

from shardscope.backend.isolation.jobs import MEMORY_ENV
from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.run.compile import MEMORY_FIELDS, compile_job
from shardscope.backend.run.compiled import PendingCompile
from tests.support.compile_oracle import loaded

PROGRAMS = Path(__file__).resolve().parents[2] / "inputs" / "programs"


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


def test_xla_s_rematerialization_warning_is_in_the_report():
    prep = prepare(loaded(str(PROGRAMS / "run_remat.py")), keep_annotated=True)
    pending = PendingCompile(2, 120.0)
    pending.give(prep.annotated_text)
    report = pending.report()
    (warning,) = [w for w in report["xla_warnings"] if "rematerialization" in w["message"]]
    assert warning["op_name"] == "x" and warning["instruction"]
    clean = PendingCompile(8, 120.0)
    clean.give(prepare(loaded("example:mlp"), keep_annotated=True).annotated_text)
    assert clean.report()["xla_warnings"] == []


def test_a_2048_device_compile_fits_in_8_gb(monkeypatch):
    # The CPU client's 2,058 threads would reserve 16 GiB of 8 MiB stacks: over the limit.
    monkeypatch.setenv(MEMORY_ENV, "8")
    prep = prepare(loaded("example:mlp"), {"data": 8, "model": 256}, keep_annotated=True)
    pending = PendingCompile(2048, 120.0)
    pending.give(prep.annotated_text)
    report = pending.report()
    assert len(report["device_assignment"]) == 2048 and report["collectives"]
