"""Where compiled collectives move their bytes on a slice of several hosts.

Which collectives cross hosts is ``sharding.hosts.Hosts.crosses`` of their device groups:
the same answer for a run of several processes (``run --hosts``) and for a compile that
runs nothing (``propagate --hosts``). ``crossing_warnings`` names the collectives that cross hosts
although another layout of the same mesh keeps them within a host; ``traffic_lines`` is
the text summary of a pricing's bytes within and across hosts. ``lay_over_hosts``
does all of it for a propagation and its compile (a ``HostTraffic`` record), and
``apply_host_layout`` prices it too: the one answer ``propagate --hosts`` and the window
give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardscope.backend.cost.hardware import HardwareProfile
from shardscope.backend.cost.price import Pricing, price_compiled
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.result import Compiled, CompiledCollective
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.backend.sharding.hosts import (
    Hosts,
    format_dcn,
    hybrid_mesh,
    ici_only_dcn,
    mesh_warnings,
)
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.units import bytes_text, seconds_text

if TYPE_CHECKING:
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.result import CompileOutcome


@dataclass(frozen=True)
class HostTraffic:
    """A propagation and its compile laid over the hosts of a slice.

    ``compiled_crossing``: whether each compiled collective's device groups cross hosts
    (None on one host, or where the program was not compiled); ``predicted_crossing``:
    whether each of Shardy's predicted collectives would (None for an all-slice, which
    moves nothing; the whole tuple None on one host); ``warnings``: the layouts that keep
    traffic on a host.
    """

    hosts: int
    compiled_crossing: tuple[bool, ...] | None = None
    predicted_crossing: tuple[bool | None, ...] | None = None
    warnings: tuple[str, ...] = ()


def lay_over_hosts(
    result: PropagationResult, compile_: CompileOutcome | None, hosts: Hosts | None
) -> HostTraffic:
    """Lay a propagation's ``result`` and its compile over ``hosts`` (its mesh's device
    numbers, as ``sharding.hosts`` assigns them; None or one host: the single-host
    answer): whether each compiled collective crosses hosts and each predicted one
    would (from the device groups of its axes), and the host warnings (``mesh_warnings``
    of the axes the compiled collectives run over, ``crossing_warnings``)."""
    compiled = compile_.collectives if isinstance(compile_, Compiled) else None
    if hosts is None or hosts.count < 2:
        return HostTraffic(1)
    if hosts.devices != result.mesh.size:
        raise ShardscopeError(
            f"{hosts.count} hosts of {hosts.devices} devices do not hold the mesh "
            f"{result.mesh.describe()}: lay the hosts over its {result.mesh.size} devices"
        )
    crossing = None
    if compiled is not None:
        crossing = tuple(hosts.crosses(c.device_groups) for c in compiled)
    predicted = tuple(_predicted_crosses(c, result.mesh, hosts) for c in result.collectives)
    busy = None if compiled is None else [c.axes for c in compiled if c.axes]
    warnings = (
        *mesh_warnings(result.mesh, hosts, busy),
        *crossing_warnings(compiled or (), result.mesh, hosts),
    )
    return HostTraffic(hosts.count, crossing, predicted, warnings)


def apply_host_layout(
    result: PropagationResult,
    compile_: CompileOutcome | None,
    hosts: Hosts | None,
    profile: HardwareProfile | str | None = None,
) -> tuple[HostTraffic, Pricing]:
    """``lay_over_hosts``, and the compiled collectives and memory priced on ``profile``
    with each host as the fast link's domain (``price_compiled``): the one answer
    ``propagate --hosts``, ``inspect`` and the window give."""
    traffic = lay_over_hosts(result, compile_, hosts)
    laid = None if traffic.hosts < 2 else hosts
    pricing = price_compiled(result, compile_, profile, laid)
    return traffic, pricing


def _predicted_crosses(c, mesh: Mesh, hosts: Hosts) -> bool | None:
    """Whether a Shardy collective over ``c.axes`` would cross hosts (None: an
    all-slice, which moves nothing, or axes the mesh cannot group)."""
    if c.kind == "all_slice" or not c.axes:
        return None
    try:
        return hosts.crosses(device_groups(mesh, c.axes))
    except ShardscopeError:
        return None


def step_traffic(c: CompiledCollective, hosts: Hosts) -> tuple[int, int]:
    """Bytes (within hosts, across hosts) one call of the program sends for ``c``: one
    run (``Hosts.traffic``, summed over all devices) times its runs per call."""
    runs = max(1, int(c.runs_per_call or 1))
    within, across = hosts.traffic(c.kind, c.device_groups, c.bytes)
    return within * runs, across * runs


def crossing_warnings(
    collectives: Sequence[CompiledCollective], mesh: Mesh, hosts: Hosts
) -> list[str]:
    """One line per (kind, axes) of the compiled collectives whose device groups cross
    hosts although a layout of the same mesh axes keeps them within a host
    (``ici_only_dcn``): where the first one sits, the bytes across hosts per step of all
    of them, the ``--dcn`` that keeps them within a host and what would cross instead.
    Empty for one host."""
    if hosts.count < 2:
        return []
    crossing: dict[tuple[str, tuple[str, ...]], list[CompiledCollective]] = {}
    for c in collectives:
        if c.axes and hosts.crosses(c.device_groups):
            crossing.setdefault((c.kind, tuple(c.axes)), []).append(c)
    out = []
    for (kind, axes), group in crossing.items():
        fix = ici_only_dcn(mesh, hosts, axes)
        if fix is None:
            continue
        fixed, fixed_hosts = hybrid_mesh(mesh, fix)
        if fixed_hosts.crosses(device_groups(fixed, axes)):
            continue
        across = sum(step_traffic(c, hosts)[1] for c in group)
        first = group[0]
        where = _where(first)
        if len(group) > 1:
            where = f"{len(group)} instructions, the first at {where}"
        text = (
            f"{kind} over {'+'.join(axes)} ({where}) crosses hosts: "
            f"{bytes_text(across)} per step across hosts; --dcn {format_dcn(fix)} lays the "
            f"hosts along {_along(fix)} and keeps it within each host"
        )
        instead = _crossing_under(collectives, mesh, hosts, fixed, fixed_hosts, skip=axes)
        if instead:
            text += f" (then {', '.join(instead)} would cross instead)"
        out.append(text)
    return out


def _where(c: CompiledCollective) -> str:
    """``line 12, jit(f)/dot_general``, or the op's name alone without a line."""
    cause = c.cause
    line = cause.line if cause is not None and cause.line is not None else c.line
    what = c.source or c.name or "?"
    return f"line {line}, {what}" if line is not None else what


def _along(dcn) -> str:
    return " and ".join(name for name, f in dcn.items() if f > 1)


def _crossing_under(
    collectives: Sequence[CompiledCollective],
    mesh: Mesh,
    hosts: Hosts,
    laid: Mesh,
    laid_hosts: Hosts,
    skip: Sequence[str],
) -> list[str]:
    """``kind over axes`` of the other collectives whose groups stay within hosts on
    ``mesh`` but would cross them on ``laid`` (another layout of the same axes)."""
    out: list[str] = []
    for c in collectives:
        if not c.axes or tuple(c.axes) == tuple(skip):
            continue
        name = f"{c.kind} over {'+'.join(c.axes)}"
        if name in out or hosts.crosses(c.device_groups):
            continue
        if laid_hosts.crosses(device_groups(laid, c.axes)):
            out.append(name)
    return out


def within_hosts_split(pricing: Pricing) -> tuple[int, int]:
    """Bytes per step within hosts: (of the collectives that stay within hosts, priced on
    the fast link; of those that cross hosts, whose within-host share is priced with
    them on the slow link)."""
    staying = sum(c.bytes_within_hosts for c in pricing.collectives if not c.crosses_hosts)
    crossing = sum(c.bytes_within_hosts for c in pricing.collectives if c.crosses_hosts)
    return staying, crossing


def traffic_lines(pricing: Pricing, top: int = 10) -> list[str]:
    """The bytes a step sends across hosts and within them, and the seconds on each
    link, in total and for each of the first ``top`` collectives that cross hosts.
    Empty for one host or where nothing was compiled."""
    if pricing.hosts < 2 or not pricing.compiled:
        return []
    fast, slow = pricing.links[0].name, pricing.links[1].name
    crossing = [c for c in pricing.collectives if c.crosses_hosts]
    within = [c for c in pricing.collectives if not c.crosses_hosts and c.bytes_within_hosts]
    staying, beside = within_hosts_split(pricing)
    also = f", which also send {bytes_text(beside)} within hosts" if beside else ""
    inside = (
        f"{bytes_text(staying)} ({_count(within)} on {fast}, "
        f"{seconds_text(pricing.step_seconds_fast_link)})"
        if within
        else "none (no collective stays within hosts)"
    )
    lines = [
        f"traffic per step on {pricing.hosts} hosts (bytes summed over all devices): "
        f"across hosts: {bytes_text(pricing.step_bytes_across_hosts)} ({_count(crossing)} "
        f"on {slow}, {seconds_text(pricing.step_seconds_slow_link)}{also}); within hosts: "
        f"{inside}",
        f"  each host one unit of the slower network, as create_hybrid_device_mesh(..., "
        f"process_is_granule=True) treats each process: a collective whose device groups "
        f"cross hosts is priced on {slow}, the others on {fast}",
    ]
    for c in crossing[:top]:
        over = f" over {'+'.join(c.axes)}" if c.axes else ""
        runs = f" x{c.runs_per_call}" if c.runs_per_call > 1 else ""
        lines.append(
            f"  crosses hosts: #{c.index} {c.kind}{over}{runs}: "
            f"{bytes_text(c.bytes_across_hosts)} across, {bytes_text(c.bytes_within_hosts)} "
            f"within, {seconds_text(c.seconds_per_call)} on {c.link}"
        )
    if len(crossing) > top:
        lines.append(f"  ... {len(crossing) - top} more crossing hosts (use --json)")
    return lines


def _count(costs: Sequence) -> str:
    return f"{len(costs)} collective" + ("" if len(costs) == 1 else "s")
