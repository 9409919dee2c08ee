"""The reports of a run's hosts (``run --hosts``) as one report of the whole run.

Each host reports the shards it holds (``distributed.host_tensor``: by device number,
with their host) and its own timings; host 0 alone reads the compiled program's
collectives and HLO text. ``merge_reports`` puts every host's shards together, checks
the replicas across hosts, and takes the slowest host's times: ``run_s`` is the largest
host median (the run is done when the last host is), the stages those of the host that
ended last.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.run.result import mark_crossing
from shardscope.backend.run.shards import replica_mismatches

if TYPE_CHECKING:
    from shardscope.backend.run.result import RunResult
    from shardscope.backend.sharding.hosts import Hosts


def merge_reports(reports: list[dict]) -> dict:
    """One report for the hosts' ``reports`` (in host order), in the form one host's has."""
    first = reports[0]
    merged = dict(first)
    merged["outputs"] = _merge_tensors([r["outputs"] for r in reports])
    merged["arguments"] = _merge_tensors([r["arguments"] for r in reports])
    slowest = max(reports, key=lambda r: r["run_s"])
    merged["run_s"] = slowest["run_s"]
    merged["run_times"] = slowest["run_times"]
    merged["compile_s"] = max(r["compile_s"] for r in reports)
    merged["reference_kept"] = all(r.get("reference_kept", False) for r in reports)
    notes: list[str] = []
    for r in reports:
        notes += [n for n in r["notes"] if n not in notes]
    merged["notes"] = notes
    merged["stages"] = _slowest_stages([r.get("stages") or {} for r in reports])
    merged["concrete_inputs"] = first["concrete_inputs"]
    return merged


def _slowest_stages(stages: list[dict]) -> dict:
    """The stages of the host that ended last (its job's start, ``started``, plus its
    stages' seconds), so that they add up to its run."""
    return max(
        stages,
        key=lambda one: one.get("started", 0.0) + sum(v for k, v in one.items() if k != "started"),
    )


def _merge_tensors(per_host: list[list[dict]]) -> list[dict]:
    """The hosts' entries for the same tensors (the same order on every host) as one
    entry each: all shards by device number, replicas compared across hosts, the
    largest error."""
    out = []
    for entries in zip(*per_host, strict=True):
        shards = sorted((s for e in entries for s in e["shards"]), key=lambda s: s["device"])
        errors = [e["max_rel_error"] for e in entries if e["max_rel_error"] is not None]
        not_finite = any(e["error_not_finite"] for e in entries)
        out.append(
            {
                **entries[0],
                "shards": shards,
                "replica_mismatches": replica_mismatches(shards),  # type: ignore[arg-type]
                # None where a host had no reference to compare with (or a non-finite one).
                "max_rel_error": max(errors) if len(errors) == len(entries) else None,
                "error_not_finite": not_finite,
            }
        )
    return out


def hosted_result(result: RunResult, hosts: Hosts) -> RunResult:
    """``result`` as a run on ``hosts``: its host count, and each compiled collective
    marked where it crosses hosts (``result.mark_crossing``)."""
    return replace(result, collectives=mark_crossing(result.collectives, hosts), hosts=hosts.count)
