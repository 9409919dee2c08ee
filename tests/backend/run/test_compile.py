"""The compile worker: an annotated module compiled on fake CPU devices (the test process
has 64), its collectives and XLA's memory analysis."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardscope.backend.isolation.limits import MEMORY_ENV
from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.run import compile as compile_worker
from shardscope.backend.run.compile import MEMORY_FIELDS, compile_job
from shardscope.backend.run.compiled import PendingCompile
from shardscope.backend.sharding.mesh import Mesh
from tests.support.compile_oracle import loaded, lowered

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


def _without_stack_frames(text: str) -> str:
    """HLO text without its stack-frame tables and ``stack_frame_id``s: those record the
    Python frames that traced the program, which differ between shardscope's loader and
    a test calling ``jax.jit``."""
    out, table = [], False
    for line in text.splitlines():
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            table = True
            continue
        if table and line[:1].isdigit():
            continue
        table = False
        out.append(re.sub(r" stack_frame_id=\d+", "", line))
    return "\n".join(out)


@pytest.mark.parametrize(
    "source",
    [
        "example:mlp",
        "example:conflict",
        "example:scan",
        str(PROGRAMS / "compiled_fsdp.py"),
        str(PROGRAMS / "run_collectives_nested.py"),
    ],
)
def test_cheap_codegen_gives_jax_jits_module_and_memory(source, tmp_path, monkeypatch):
    program = loaded(source)
    prep = prepare(program, keep_annotated=True)
    job = {"module": prep.annotated_text, "devices": Mesh.from_dict(program.mesh).size}
    report = compile_job(job, tmp_path)
    # The same module with XLA's default debug options: byte for byte the same text.
    monkeypatch.setattr(compile_worker, "CODEGEN_OPTIONS", {})
    assert compile_job(job, tmp_path)["hlo_text"] == report["hlo_text"]
    compiled = lowered(program).compile()
    assert _without_stack_frames(report["hlo_text"]) == _without_stack_frames(compiled.as_text())
    stats = compiled.memory_analysis()
    assert report["memory"] == {
        key: getattr(stats, "peak_memory_in_bytes" if key == "peak" else f"{key}_size_in_bytes")
        for key in MEMORY_FIELDS
    }
