"""A compile stopped once XLA's partitioned module is final: the same collectives as
``jax.jit(...).compile()``, no memory, and the worker ended before code generation."""

from __future__ import annotations

import pytest

from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.run.compile import compile_job, compile_module
from shardscope.backend.run.compiled import EARLY_STOPPED, PendingCompile, read_compile
from shardscope.backend.run.early_stop import (
    AFTER_FINAL,
    FINAL,
    OFFER_S,
    early_job,
    estimate_s,
    final_module,
    request_stop,
    worth_stopping,
)
from shardscope.backend.sharding.mesh import Mesh
from tests.support.compile_oracle import loaded, lowered, propagated


def test_the_final_module_counts_only_once_the_file_after_it_is_written(tmp_path):
    dump = tmp_path / "dump"
    assert final_module(dump) is None  # no folder yet
    dump.mkdir()
    (dump / "module_0000.jit_f.before_optimizations.txt").write_text("HloModule f")
    assert final_module(dump) is None
    (dump / f"module_0000.jit_f{FINAL}").write_text("HloModule f")
    assert final_module(dump) is None  # it may still be being written
    (dump / f"module_0000.jit_f{AFTER_FINAL}").write_text("")
    assert final_module(dump) == dump / f"module_0000.jit_f{FINAL}"


def _collectives(report_or_text, n: int) -> list[tuple]:
    records = (
        report_or_text["collectives"]
        if isinstance(report_or_text, dict)
        else read_collectives(report_or_text, list(range(n)), n)
    )
    return [(c["kind"], c["groups"], c["shapes"], c["op_name"]) for c in records]


@pytest.mark.parametrize(
    "source", ["example:mlp", "example:conflict", "example:scan", "example:transformer"]
)
def test_the_dumped_final_module_has_jax_jits_collectives(source, tmp_path):
    program = loaded(source)
    n = Mesh.from_dict(program.mesh).size
    prep = prepare(program, keep_annotated=True)
    compile_module(prep.annotated_text, n, dump=tmp_path)
    final = final_module(tmp_path)
    assert final is not None
    expected = _collectives(lowered(program).compile().as_text(), n)
    assert expected and _collectives(final.read_text(), n) == expected


def test_an_early_stopped_compile_reports_the_final_module_and_no_memory():
    program = loaded("example:transformer")
    n = Mesh.from_dict(program.mesh).size
    prep = prepare(program, keep_annotated=True)
    unstoppable = PendingCompile(n, 300.0)
    unstoppable.give(prep.annotated_text)
    assert not unstoppable.stop_early()  # not given stoppable: nothing to stop at
    pending = PendingCompile(n, 300.0)
    pending.give(prep.annotated_text, stoppable=True)
    assert pending.stop_early()  # asked at once: it stops at the first chance
    report = pending.report()
    assert report["early_stopped"] and report["memory"] is None
    assert report["hlo_text"].startswith("HloModule")
    expected = _collectives(lowered(program).compile().as_text(), n)
    assert expected and _collectives(report, n) == expected
    assert unstoppable.report()["memory"]["peak"] > 0


def test_a_stoppable_compile_left_alone_finishes_with_its_memory():
    prep = prepare(loaded("example:mlp"), keep_annotated=True)
    pending = PendingCompile(8, 300.0)
    pending.give(prep.annotated_text, stoppable=True)
    report = pending.report()
    assert not report.get("early_stopped") and report["memory"]["peak"] > 0


def test_an_early_stopped_result_says_its_memory_is_missing():
    result = propagated("example:transformer")
    prep = prepare(loaded("example:transformer"), keep_annotated=True)
    pending = PendingCompile(result.mesh.size, 300.0)
    pending.give(prep.annotated_text, stoppable=True)
    pending.stop_early()
    compiled = read_compile(result, pending.report())
    assert compiled.early_stopped and compiled.memory is None
    assert EARLY_STOPPED in compiled.warnings and "memory is missing" in EARLY_STOPPED
    assert compiled.collectives


def test_the_estimate_grows_with_the_module_and_with_the_dump():
    # example:transformer?layers=24's annotated module: 1.36 MB, 17 s here undumped
    assert 10 < estimate_s(1_356_101) < 30
    assert estimate_s(1_356_101, dumping=True) > estimate_s(1_356_101)
    assert estimate_s(5_000) < 1 and not worth_stopping(5_000)
    assert worth_stopping(1_356_101) and estimate_s(1_356_101) >= OFFER_S


def test_a_stoppable_job_left_to_finish_reports_its_memory_each_time(tmp_path):
    # in this process, twice: the first compile's end leaves nothing held for the next
    prep = prepare(loaded("example:mlp"), keep_annotated=True)
    job = {"module": prep.annotated_text, "devices": 8, "early": early_job(tmp_path)}
    for _ in range(2):
        report = compile_job(job, tmp_path)
        assert report["memory"]["peak"] > 0 and "early_stopped" not in report
    assert final_module(tmp_path / "xla-dump") is not None  # it dumped as it compiled


def test_asking_a_finished_compile_to_stop_does_nothing(tmp_path):
    early = early_job(tmp_path / "gone")  # its folder removed with the worker
    request_stop(early)
    assert not (tmp_path / "gone").exists()
