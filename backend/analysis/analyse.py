"""``analyse``: propagate a program, compile it, lay it over hosts, price it and, when
asked, compare it with GSPMD: the one answer ``propagate``, ``inspect`` and the tests
read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.cost.traffic import apply_host_layout
from shardscope.backend.run.compiled import PendingCompile, propagate_compiled

if TYPE_CHECKING:
    from shardscope.backend.cost.hardware import HardwareProfile
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.sharding.hosts import Hosts
    from shardscope.backend.sharding.mesh import Mesh


def analyse(
    program: Program,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    *,
    timeout: float = 300.0,
    hosts: Hosts | None = None,
    hardware: HardwareProfile | str | None = None,
    gspmd: bool = False,
    started: PendingCompile | None = None,
) -> Analysis:
    """Propagate ``program`` on ``mesh`` with ``specs`` and compile it
    (``run.compiled.propagate_compiled``), lay both over ``hosts`` and price them on
    ``hardware`` (``cost.traffic.apply_host_layout``), and with ``gspmd`` compile it with
    GSPMD too (``gspmd.compare.compare_gspmd``). ``started``: a compile worker started
    before the program loaded (``run.compiled.start_compile``)."""
    result, compile_ = propagate_compiled(program, mesh, specs, timeout=timeout, started=started)
    result = replace(
        result,
        framework=program.framework,
        partitioner=program.partitioner,
        sharded_by=dict(getattr(program, "sharded_by", None) or {}),
    )
    traffic, pricing = apply_host_layout(result, compile_, hosts, hardware)
    comparison = None
    if gspmd:
        # Imported only when asked for: it loads the GSPMD compile's machinery.
        from shardscope.backend.gspmd.compare import compare_gspmd

        comparison = compare_gspmd(program, result, timeout=timeout)
    return Analysis(result, compile_, traffic, pricing, comparison)
