"""Shardy's propagation pipeline as jaxlib registers it, cut where shardscope reads.

The pass list is read back from the registry, so it follows the installed jaxlib. The
debug options are switched on: ``sdy-apply-sharding-constraints`` and
``sdy-user-priority-propagate`` then record ``sdy.propagation_edges`` /
``sdy.sharding_origins``. The pipeline, unlike the bare propagate pass, imports calls as
named computations and adds data-flow edges, so while loops, conditionals, calls and
shard_map propagate exactly as in the compiler.
"""

from __future__ import annotations

import functools

from jaxlib.mlir import passmanager

from shardscope.backend.program.locations import split_outside
from shardscope.backend.program.mlir import new_context

ROUTE = "in-process sdy-propagation-pipeline (debug edges and origins on)"
# Where Shardy crashed with the origins option on and ran without it.
ROUTE_NO_ORIGINS = "in-process sdy-propagation-pipeline (debug edges on, origins off)"
# Where Shardy crashed recording its edges too (jaxlib 0.10.2's Shardy on a torch_xla
# Megatron-style step) and ran with neither: final shardings, no steps.
ROUTE_NO_STEPS = "in-process sdy-propagation-pipeline (debug edges and origins off)"


def route(origins: bool, edges: bool) -> str:
    """The route of a run of ``pipeline_stages(origins, edges)``."""
    return ROUTE if origins and edges else ROUTE_NO_ORIGINS if edges else ROUTE_NO_STEPS


@functools.lru_cache(maxsize=3)
def pipeline_stages(origins: bool = True, edges: bool = True) -> tuple[str, str]:
    """The registered propagation pipeline split into (propagate, export) pass lists.

    ``propagate`` ends with ``sdy-user-priority-propagate`` (with the op sharding rules
    kept), ``export`` runs the rest of the pipeline up to and including
    ``sdy-close-shardings``. Debug options are switched on; the module dumps
    (``sdy-save-module``, not registered on its own) are dropped. ``origins=False`` leaves
    ``debug-sharding-origins`` off (steps are still recorded, without where an axis came
    from); ``edges=False`` leaves both off (no steps are recorded, only final shardings).
    """
    flag = "true" if origins and edges else "false"
    edge = "true" if edges else "false"
    debug = f"debug-propagation-edge-sharding={edge} debug-sharding-origins={flag}"
    sink = f"sink-debug-propagation-edge-sharding={edge} sink-debug-sharding-origins={flag}"
    ctx = new_context()
    text = str(
        passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)", context=ctx)
    )
    body = text[len("builtin.module(") : -1]
    passes = _split_top(body)
    passes = [p for p in passes if p != "sdy-save-module"]
    out = []
    for p in passes:
        p = p.replace("debug-propagation-edge-sharding=false debug-sharding-origins=false", debug)
        p = p.replace(
            "sink-debug-propagation-edge-sharding=false sink-debug-sharding-origins=false", sink
        )
        out.append(p)
    cut = next(i for i, p in enumerate(out) if p.startswith("sdy-user-priority-propagate")) + 1
    end = next(i for i, p in enumerate(out) if p.startswith("sdy-close-shardings")) + 1
    propagate = "builtin.module(" + ",".join(out[:cut]) + ")"
    export = "builtin.module(" + ",".join(out[cut:end]) + ")"
    return propagate, export


def _split_top(text: str) -> list[str]:
    """Split a pass list on commas outside braces and parentheses."""
    return [p.strip() for p in split_outside(text, ",", "{(", "})") if p.strip()]
