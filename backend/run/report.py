"""A run worker's report as the ``RunResult`` the CLI, the window and ``render`` show: its
compiled collectives matched with a propagation's predicted ones, XLA's warnings of the
compile on their program ops, and the shards of every argument and output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardscope.backend.run.compiled import compiled_collective
from shardscope.backend.run.match import match, predicted_refs
from shardscope.backend.run.result import RunResult, TensorRun, XlaWarningEntry
from shardscope.backend.run.xla_log import instruction_op_names, read_warnings

if TYPE_CHECKING:
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.sharding.mesh import Mesh


def report_result(
    name: str,
    mesh: Mesh,
    report: dict,
    log_text: str,
    notes: list[str],
    propagation: PropagationResult | None,
) -> RunResult:
    """The ``RunResult`` of the worker's ``report`` on a program called ``name``; its
    stderr ``log_text`` gives XLA's warnings, ``propagation`` the predicted collectives."""
    text = report["hlo_text"]
    collectives = [compiled_collective(c) for c in report["collectives"]]
    predicted_only = []
    if propagation is not None:
        refs = predicted_refs(propagation.collectives, propagation.graph)
        collectives, predicted_only = match(collectives, refs)
    op_names = instruction_op_names(text.splitlines())
    warnings = [XlaWarningEntry(**w) for w in read_warnings(log_text, op_names)]
    return RunResult(
        program=name,
        platform=report["platform"],
        device_count=report["device_count"],
        mesh=mesh.shape,
        outputs=[TensorRun.from_report(t) for t in report["outputs"]],
        arguments=[TensorRun.from_report(t) for t in report["arguments"]],
        collectives=collectives,
        predicted_only=predicted_only,
        warnings=warnings,
        compile_s=report["compile_s"],
        run_s=report["run_s"],
        memory=report["memory"],
        run_times=report["run_times"],
        notes=[*notes, *report["notes"]],
        concrete_inputs=report["concrete_inputs"],
        reference_kept=report.get("reference_kept", False),
        stages={k: v for k, v in report.get("stages", {}).items() if k != "started"},
        device_order=list(mesh.device_order),
        hlo_text=text,
    )
