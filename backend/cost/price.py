"""What the compiled collectives and memory cost on a hardware profile: an estimate.

``price(collectives, memory, profile)`` prices each compiled collective (one run, and
``runs_per_call`` runs per call of the program), each program op and one call of the
program; ``price_compiled(result, compile_, profile)`` does so for a propagation's compiled
collectives and memory (``cost`` in ``propagate --json``).

With ``S`` the bytes of the collective's result one device holds (``result_bytes``),
``N`` the devices of one group, ``B`` the link's bytes per second per device and ``a``
its latency per step (``hardware.toml``), the standard formulas:

- all-gather, ring: ``(N-1)(a + S/(N·B))``;
- reduce-scatter, ring on its input (``N·S`` per device): ``(N-1)(a + S/B)``;
- all-reduce, ring (a reduce-scatter then an all-gather): ``2(N-1)(a + S/(N·B))``;
- all-to-all, pairwise: ``(N-1)(a + S/(N·B))``;
- collective-permute, one hop: ``a + S/B``;
- ragged-all-to-all and collective-broadcast: ``(N-1)a + bytes/B``, with the bytes
  ``CompiledCollective.bytes`` gives (``S``).

The bytes each formula sends per device are those of ``propagation.predicted_collectives``
``bytes_per_device``, the ``bytes`` of every ``CompiledCollective``: ``S(N-1)/N``,
``S(N-1)``, ``2S(N-1)/N``, ``S(N-1)/N`` and ``S`` (a permute's groups are its source and
target pairs). A group whose devices all sit in one fast domain (device ``d`` in domain
``d // profile.domain``) uses the fast link (ICI, NVLink); a collective any of whose
groups spans domains is priced wholly on the slow link (DCN, InfiniBand), at a device's
share of it: its ring crosses it. A collective combining several operands is shared among
their ops in proportion to their elements.

With ``hosts`` (``sharding.hosts.Hosts``: ``propagate --hosts``, ``run --hosts``) the fast
domain is one host instead of the profile's ``fast_domain``, as
``create_hybrid_device_mesh(..., process_is_granule=True)`` treats each process as a unit
of the slower network: a collective whose groups cross hosts is priced on the slow link,
the others on the fast one. Each collective's bytes per step (one call of the program:
one run times ``runs_per_call``, summed over all the devices of its groups) are split
into those that stay within a host and those that cross hosts (``Hosts.traffic``).

Memory is XLA's CPU buffer assignment (``compiled.memory_analysis()`` of the compile on
fake CPU devices) held against the profile's memory per device: the accelerator's own
compiler assigns its own buffers, so the fit is an estimate too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shardscope.backend.cost.hardware import HardwareProfile, Link
from shardscope.backend.cost.hardware import profile as find_profile
from shardscope.backend.json_form import JsonForm
from shardscope.backend.run.result import Compiled, CompiledCollective
from shardscope.backend.sharding.hosts import Hosts, group_traffic

if TYPE_CHECKING:
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.result import CompileOutcome

FORMULAS = (
    "ring: all-gather (N-1)(a + S/(N·B)), reduce-scatter (N-1)(a + S/B) on its input N·S, "
    "all-reduce 2(N-1)(a + S/(N·B)); pairwise: all-to-all (N-1)(a + S/(N·B)); one hop: "
    "collective-permute a + S/B (S: bytes of the result per device, N: group size, "
    "B: link bandwidth per device, a: latency per step)"
)
ESTIMATE = (
    "estimate: each collective alone on its link at the profile's bandwidth and latency, "
    "no overlap with compute or with other collectives"
)
MEMORY_SOURCE = (
    "XLA's CPU buffer assignment (compiled.memory_analysis() on fake CPU devices), bytes "
    "per device: an estimate of what the accelerator's compiler would assign"
)
# Steps and the share of S each step sends, per kind: (steps(N), sent(S, N)).
_RING = {
    "all-gather": (lambda n: n - 1, lambda s, n: s * (n - 1) / n),
    "reduce-scatter": (lambda n: n - 1, lambda s, n: s * (n - 1)),
    "all-reduce": (lambda n: 2 * (n - 1), lambda s, n: 2 * s * (n - 1) / n),
    "all-to-all": (lambda n: n - 1, lambda s, n: s * (n - 1) / n),
    "collective-permute": (lambda n: 1, lambda s, n: s),
}
_SHAPES = {
    "all-gather": "(N-1)(a + S/(N·B))",
    "reduce-scatter": "(N-1)(a + S/B)",
    "all-reduce": "2(N-1)(a + S/(N·B))",
    "all-to-all": "(N-1)(a + S/(N·B))",
    "collective-permute": "a + S/B",
}
_NAMES = {
    "all-gather": "ring",
    "reduce-scatter": "ring",
    "all-reduce": "ring",
    "all-to-all": "pairwise",
    "collective-permute": "one hop",
}


@dataclass(frozen=True)
class CollectiveCost(JsonForm):
    """One compiled collective priced: its place in ``collectives``, one run and one call."""

    index: int
    kind: str
    group_size: int
    bytes_per_device: int
    seconds: float  # one run
    runs_per_call: int
    seconds_per_call: float
    link: str  # the link it crosses: ICI, DCN, NVLink, InfiniBand, ...
    formula: str  # the formula used, with its numbers
    # Per step, summed over all devices: bytes that stay within a host and that cross
    # hosts (all within one host where no hosts were given).
    bytes_within_hosts: int = 0
    bytes_across_hosts: int = 0
    crosses_hosts: bool = False
    # The mesh axes of its device groups (None: not known).
    axes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class OpCost(JsonForm):
    """A program op's collectives priced (the op they serve, or the op holding them)."""

    op: int | None
    name: str
    collectives: int
    bytes: int  # per call of the program, per device
    seconds_per_call: float


@dataclass(frozen=True)
class MemoryFit(JsonForm):
    """XLA's buffer assignment per device against the profile's memory: judged on the
    bytes the program's buffers hold on a device while it runs (``held``), not on XLA's
    ``peak`` alone, which on the CPU leaves the temporaries out."""

    source: str
    argument: int
    output: int
    alias: int
    temp: int
    # argument + output + temp - alias: the buffers a run holds on a device at once.
    held: int
    peak: int | None  # XLA's ``peak_memory_in_bytes``; None where not given
    needs: int  # the figure judged: ``held``, or XLA's peak where that is larger
    capacity_bytes: float
    capacity: str  # the profile's own figure: ``16 GB``
    fraction: float  # needs / capacity
    fits: bool
    text: str  # ``fits in 16 GB: 31%`` / ``does not fit: needs 20 GB of 16 GB``
    measure: str  # what ``needs`` is, in words

    def line(self) -> str:
        """``fits in 16 GB: <0.01% (needs 540500 B per device: arguments + outputs +
        temporaries - aliased; XLA's peak 33844 B leaves the temporaries out; SOURCE)``."""
        return f"{self.text} (needs {self.needs} B per device: {self.measure}; {self.source})"


@dataclass(frozen=True)
class Pricing(JsonForm):
    """Compiled collectives and memory priced on one hardware profile (``cost``)."""

    hardware: str
    label: str
    formulas: str
    estimate: str
    links: tuple[Link, ...]
    collectives: tuple[CollectiveCost, ...]
    ops: tuple[OpCost, ...]
    step_seconds: float
    step_bytes: int
    memory: MemoryFit | None
    # The figures of the profile no stored page gives, each with why.
    assumed: tuple[str, ...] = ()
    # False where the program was not compiled: nothing was priced.
    compiled: bool = True
    # The hosts the mesh is laid over, and per step the bytes (summed over all devices)
    # within hosts and across them, and the seconds on the fast and the slow link.
    hosts: int = 1
    step_bytes_within_hosts: int = 0
    step_bytes_across_hosts: int = 0
    step_seconds_fast_link: float = 0.0
    step_seconds_slow_link: float = 0.0

    def summary_lines(self, top: int = 5, measured: Sequence[float] | None = None) -> list[str]:
        """The readable cost section: time per step, the ``top`` ops, memory fit; with
        ``measured`` (seconds of real runs on the accelerator) beside the estimate."""
        lines = [f"cost on {self.label} ({self.hardware}), an estimate:"]
        if not self.compiled:
            return lines + ["  not compiled: no collectives or memory to price"]
        lines.append(f"  formulas: {self.formulas}")
        for link in self.links:
            lines.append(
                f"  {link.name}: {_rate(link.bytes_per_second)} per device, "
                f"a = {_us(link.latency_s)} ({link.text})"
            )
        lines.append(
            f"  estimate per step: {_us(self.step_seconds)} in collectives, "
            f"{self.step_bytes} B sent per device ({len(self.collectives)} collectives)"
        )
        if measured:
            runs = ", ".join(f"{t * 1e3:.3g} ms" for t in measured)
            lines.append(f"  measured per run (whole program, on the accelerator): {runs}")
        if self.ops:
            lines.append(f"  top ops ({min(top, len(self.ops))} of {len(self.ops)}):")
            for o in self.ops[:top]:
                where = f"op {o.op} " if o.op is not None else ""
                lines.append(
                    f"    {_us(o.seconds_per_call):>10}  {o.bytes:>10} B  "
                    f"{o.collectives} collective(s)  {where}{o.name}"
                )
        if self.memory is not None:
            m = self.memory
            lines.append(f"  memory: {m.line()}")
        for a in self.assumed:
            lines.append(f"  assumed {a}")
        return lines


def price(
    collectives: Sequence[CompiledCollective],
    memory: Mapping[str, Any] | None,
    profile: HardwareProfile | str | None = None,
    op_names: Mapping[int, str] | None = None,
    memory_source: str = MEMORY_SOURCE,
    hosts: Hosts | None = None,
) -> Pricing:
    """Price ``collectives`` and ``memory`` on ``profile`` (a name, or None for the
    default). ``op_names`` names program ops by id (a holder's name); ``memory_source``
    says whose buffer assignment ``memory`` is; ``hosts``: the hosts the devices lie on,
    each host the fast link's domain (None: the profile's ``fast_domain``)."""
    hw = find_profile(profile)
    costs = tuple(_cost(i, c, hw, hosts) for i, c in enumerate(collectives))
    ops = _ops(collectives, costs, op_names or {})
    slow = hw.slow.name
    return Pricing(
        hardware=hw.name,
        label=hw.label,
        formulas=FORMULAS,
        estimate=ESTIMATE if hosts is None else estimate_with_hosts(hosts, hw),
        links=hw.links,
        collectives=costs,
        ops=ops,
        step_seconds=sum(c.seconds_per_call for c in costs),
        step_bytes=sum(c.bytes_per_device * c.runs_per_call for c in costs),
        memory=memory_fit(memory, hw, memory_source),
        assumed=tuple(f"{f.name}: {f.note}" for f in hw.assumptions),
        hosts=1 if hosts is None else hosts.count,
        step_bytes_within_hosts=sum(c.bytes_within_hosts for c in costs),
        step_bytes_across_hosts=sum(c.bytes_across_hosts for c in costs),
        step_seconds_fast_link=sum(c.seconds_per_call for c in costs if c.link != slow),
        step_seconds_slow_link=sum(c.seconds_per_call for c in costs if c.link == slow),
    )


def estimate_with_hosts(hosts: Hosts, hw: HardwareProfile) -> str:
    """``ESTIMATE``, saying how ``hosts`` choose each collective's link."""
    return (
        f"{ESTIMATE}; the mesh lies over {hosts.count} hosts of {hosts.per_host} devices, "
        f"each host one unit of the slower network as create_hybrid_device_mesh(..., "
        f"process_is_granule=True) treats each process: a collective whose device groups "
        f"cross hosts is priced on {hw.slow.name} at a device's share of it, the others on "
        f"{hw.fast.name}"
    )


def price_compiled(
    result: PropagationResult,
    compile_: CompileOutcome | None,
    profile: HardwareProfile | str | None = None,
    hosts: Hosts | None = None,
) -> Pricing:
    """Price a propagation's compiled collectives and memory, on ``hosts`` where given
    (``price``); where the program was not compiled the pricing says so (``compiled``
    False)."""
    names = {}
    if result.graph is not None:
        names = {op.id: op.location_name or op.name for op in result.graph.ops}
    if not isinstance(compile_, Compiled):
        pricing = price([], None, profile, names, hosts=hosts)
        return dataclasses.replace(pricing, compiled=False, memory=None)
    return price(list(compile_.collectives), compile_.memory, profile, names, hosts=hosts)


def crosses_domains(c: CompiledCollective, domain: int) -> bool:
    """Whether any group holds devices of two fast domains (``id // domain``)."""
    return any(len({d // domain for d in g}) > 1 for g in c.device_groups or ())


def _cost(
    index: int, c: CompiledCollective, hw: HardwareProfile, hosts: Hosts | None
) -> CollectiveCost:
    cost = _link_cost(index, c, hw, hosts)
    runs = cost.runs_per_call
    if hosts is None:
        within = sum(group_traffic(c.kind, g, c.bytes, _one_host)[0] for g in c.device_groups or ())
        within, across, crosses = round(within) * runs, 0, False
    else:
        within, across = (b * runs for b in hosts.traffic(c.kind, c.device_groups, c.bytes))
        crosses = hosts.crosses(c.device_groups)
    return dataclasses.replace(
        cost,
        bytes_within_hosts=within,
        bytes_across_hosts=across,
        crosses_hosts=crosses,
        axes=c.axes,
    )


def _one_host(device: int) -> int:
    return 0


def _link_cost(
    index: int, c: CompiledCollective, hw: HardwareProfile, hosts: Hosts | None
) -> CollectiveCost:
    runs = max(1, int(getattr(c, "runs_per_call", 1) or 1))
    if hosts is None:
        crossing = crosses_domains(c, hw.domain)
    else:
        crossing = hosts.crosses(c.device_groups)
    link = hw.slow if crossing else hw.fast
    n = c.group_size
    s = c.result_bytes
    if c.device_groups is None:
        # Groups not read: one send of its bytes.
        seconds = link.latency_s + c.bytes / link.bytes_per_second
        formula = (
            f"{c.kind}, groups not read: a + bytes/B = {_us(link.latency_s)} + "
            f"{c.bytes} B / {_gbs(link)} = {_us(seconds)} on {link.name}"
        )
        return CollectiveCost(
            index, c.kind, n, c.bytes, seconds, runs, seconds * runs, link.name, formula
        )
    if n <= 1:
        formula = f"{c.kind} within one device: nothing sent"
        return CollectiveCost(index, c.kind, n, 0, 0.0, runs, 0.0, link.name, formula)
    a, b = link.latency_s, link.bytes_per_second
    if c.kind in _RING:
        steps_of, sent_of = _RING[c.kind]
        steps, sent = steps_of(n), sent_of(s, n)
        bytes_sent = c.bytes
        seconds = steps * a + sent / b
        formula = (
            f"{c.kind} {_NAMES[c.kind]} on {link.name}: {_SHAPES[c.kind]} with N={n}, "
            f"S={s} B, B={_gbs(link)}, a={_us(a)}: {steps} steps, {bytes_sent} B sent "
            f"= {_us(seconds)}"
        )
    else:
        steps, bytes_sent = n - 1, c.bytes
        seconds = steps * a + bytes_sent / b
        formula = (
            f"{c.kind} on {link.name}: (N-1)a + bytes/B with N={n}, bytes={bytes_sent} B, "
            f"B={_gbs(link)}, a={_us(a)} = {_us(seconds)}"
        )
    if runs > 1:
        formula += f"; x{runs} runs per call = {_us(seconds * runs)}"
    return CollectiveCost(
        index, c.kind, n, bytes_sent, seconds, runs, seconds * runs, link.name, formula
    )


def _ops(
    collectives: Sequence[CompiledCollective],
    costs: Sequence[CollectiveCost],
    names: Mapping[int, str],
) -> tuple[OpCost, ...]:
    rows: dict[Any, list] = {}  # key -> [op, name, collectives, bytes, seconds]
    for c, cost in zip(collectives, costs, strict=True):
        for key, op, name, share in _shares(c, names):
            row = rows.setdefault(key, [op, name, 0, 0.0, 0.0])
            row[2] += 1
            row[3] += cost.bytes_per_device * cost.runs_per_call * share
            row[4] += cost.seconds_per_call * share
    out = [OpCost(op, name, n, round(b), s) for op, name, n, b, s in rows.values()]
    out.sort(key=lambda o: (-o.seconds_per_call, -o.bytes, o.name))
    return tuple(out)


def _shares(
    c: CompiledCollective, names: Mapping[int, str]
) -> list[tuple[Any, int | None, str, float]]:
    """Each program op the collective serves, with its share of the collective."""
    holder = getattr(c, "holder", None)
    if holder is not None:
        return [(("op", holder), holder, names.get(holder, c.source), 1.0)]
    tensors = c.tensors
    if not tensors:
        return [(("name", c.source), None, c.source, 1.0)]
    sizes = [math.prod(s) for s in c.shapes] if len(c.shapes) == len(tensors) else []
    total = sum(sizes)
    by_key: dict[Any, list] = {}
    for i, t in enumerate(tensors):
        share = sizes[i] / total if total else 1 / len(tensors)
        key = ("op", t.op) if t.op is not None else ("name", t.op_name)
        name = names.get(t.op, t.op_name) if t.op is not None else t.op_name
        entry = by_key.setdefault(key, [key, t.op, name, 0.0])
        entry[3] += share
    return [tuple(e) for e in by_key.values()]  # type: ignore[misc]


def memory_fit(
    memory: Mapping[str, Any] | None, hw: HardwareProfile, source: str = MEMORY_SOURCE
) -> MemoryFit | None:
    """XLA's buffer assignment per device against ``hw``'s memory (None: no analysis),
    judged on what the buffers hold at once: arguments + outputs + temporaries - the
    output bytes that reuse a donated argument's buffer (aliased). XLA's peak, where
    given, is judged instead where it is larger. On the CPU (jaxlib 0.10.2) XLA's peak is
    the arguments and outputs less aliased, without the temporaries (the tests check it
    against ``compiled.memory_analysis()``)."""
    if not memory:
        return None
    parts = {k: int(memory.get(k) or 0) for k in ("argument", "output", "alias", "temp")}
    held = held_bytes(memory)
    peak = None if memory.get("peak") is None else int(memory["peak"])
    needs, measure = held, _held_words(parts, peak)
    if peak is not None and peak > held:
        needs, measure = peak, f"XLA's peak, above {held} B held by its buffers"
    capacity = hw.memory_bytes
    fraction = needs / capacity
    fits = needs <= capacity
    if fits:
        text = f"fits in {hw.memory_text}: {_percent(fraction)}"
    else:
        text = f"does not fit: needs {_in_unit(needs, hw.memory_text)} of {hw.memory_text}"
    return MemoryFit(
        source,
        parts["argument"],
        parts["output"],
        parts["alias"],
        parts["temp"],
        held,
        peak,
        needs,
        capacity,
        hw.memory_text,
        fraction,
        fits,
        text,
        measure,
    )


HELD_WORDS = "arguments + outputs + temporaries - aliased"


def held_bytes(memory: Mapping[str, Any]) -> int:
    """The bytes a run's buffers hold on a device at once, by XLA's buffer assignment
    (``memory``: ``compiled.memory_analysis()``'s figures by ``MEMORY_FIELDS`` name): its
    arguments, outputs and temporaries, less the outputs that reuse a donated argument's
    buffer (aliased)."""
    argument, output, alias, temp = (
        int(memory.get(k) or 0) for k in ("argument", "output", "alias", "temp")
    )
    return argument + output - alias + temp


def _held_words(parts: Mapping[str, int], peak: int | None) -> str:
    """What ``held`` sums, and how XLA's peak stands beside it."""
    words = HELD_WORDS
    if peak is None:
        return words + " (no peak given)"
    if parts["temp"] and peak == parts["argument"] + parts["output"] - parts["alias"]:
        return f"{words}; XLA's peak {peak} B leaves the temporaries out"
    return f"{words}; XLA's peak {peak} B"


def _percent(fraction: float) -> str:
    pct = 100 * fraction
    if pct >= 1 or pct == 0:
        return f"{pct:.0f}%"
    return f"{pct:.2f}%" if pct >= 0.01 else "<0.01%"


def _in_unit(n: int, like: str) -> str:
    """``n`` bytes in the unit of the profile's figure (``GB`` or ``GiB``)."""
    unit = like.split()[-1]
    scale = float(2**30) if unit == "GiB" else 1e9
    return f"{n / scale:.3g} {unit}"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"


def _gbs(link: Link) -> str:
    return _rate(link.bytes_per_second)


def _rate(bytes_per_second: float) -> str:
    return f"{bytes_per_second / 1e9:.4g} GB/s"
