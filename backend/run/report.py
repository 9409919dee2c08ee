"""A run worker's report as the ``RunResult`` the CLI, the window and ``render`` show: its
compiled collectives in ``propagate``'s form (matched with a propagation's predicted ones
and explained by the same code, ``compiled.explained_collectives``), XLA's warnings of the
compile on their program ops, and the shards of every argument and output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardscope.backend.json_form import from_json_form
from shardscope.backend.run.compiled import compiled_collective, explained_collectives
from shardscope.backend.run.result import (
    CompiledCollective,
    PredictedRef,
    RunResult,
    TensorRun,
    XlaWarningEntry,
)
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
    stderr ``log_text`` gives XLA's warnings. With ``propagation``, the collectives are
    in ``propagate``'s form (``compiled.explained_collectives``: axes, origin, cause,
    matched with the predicted ones); without, as the HLO text says them, or as the
    worker explained them where it predicted them itself (``explained_json``)."""
    text = report["hlo_text"]
    collectives = [compiled_collective(c) for c in report["collectives"]]
    predicted_only: list[PredictedRef] = []
    if propagation is not None:
        collectives, predicted_only, _ = explained_collectives(propagation, report)
    elif report.get("explained") is not None:
        collectives, predicted_only = read_explained(report["explained"])
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


def explained_json(propagation: PropagationResult, report: dict) -> dict:
    """A run worker's collectives in ``propagate``'s form (``explained_collectives`` on
    its ``propagation``), as the report carries them to ``report_result``."""
    collectives, predicted_only, _ = explained_collectives(propagation, report)
    return {
        "collectives": [c.to_json() for c in collectives],
        "predicted_only": [p.to_json() for p in predicted_only],
    }


def read_explained(data: dict) -> tuple[list[CompiledCollective], list[PredictedRef]]:
    """The collectives and the unmatched predicted ones ``explained_json`` wrote."""
    return (
        [from_json_form(CompiledCollective, c) for c in data["collectives"]],
        [from_json_form(PredictedRef, p) for p in data["predicted_only"]],
    )
