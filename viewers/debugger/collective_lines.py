"""The lines of the Collectives dock around its tables: the header, the status, how bytes
and times are worked out, the totals per kind, the traffic within and across hosts, the
memory, and the chosen collective's groups and cause. Nothing here touches Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from shardscope.backend.cost.price import HELD_WORDS, held_bytes
from shardscope.backend.cost.traffic import within_hosts_split
from shardscope.backend.run.compiled import COMPILE_CANCELLED, MAX_CPU_DEVICES
from shardscope.backend.run.result import operand_label
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.units import bytes_text
from shardscope.viewers.common.partitioners import own_compile, partitioners
from shardscope.viewers.debugger.collective_columns import (
    BYTES_HEADER_TIP,
    line_text,
    main_op,
    op_label,
    time_text,
    totals_by_kind,
)

if TYPE_CHECKING:
    from shardscope.backend.analysis.analysis import Analysis
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.run.result import CollectiveCause, CompiledCollective

BYTES_LINE = (
    "Bytes / device, with S a device's share of the result and N the devices of a group: "
    "all_gather S(N-1)/N · all_reduce 2S(N-1)/N · reduce_scatter S(N-1) · all_to_all "
    "S(N-1)/N · collective_permute S · all_slice 0"
)
HEADER = "Shardy's prediction (before compiling)"
COMPILED_HEADER = "The compiled program's collectives (XLA's SPMD partitioner)"
EMPTY_STATUS = "No propagation yet: propagate (F5) to see the collectives."
MEMORY_LABEL = "Memory per device, XLA's CPU buffer assignment"
MEMORY_MISSING = (
    "Memory per device: missing, the compile was stopped early (once XLA had partitioned "
    "the module); propagate again (F5) and let it finish to see it"
)
# ``memory`` keys shown, with the words for them.
MEMORY_PARTS = (
    ("argument", "arguments"),
    ("output", "outputs"),
    ("temp", "temporaries"),
    ("alias", "aliased"),
    ("peak", "XLA's peak"),
)


class CollectiveCost(Protocol):
    """What the dock reads of one priced collective (``backend.cost.price``)."""

    seconds: float
    seconds_per_call: float
    link: str
    formula: str


class MemoryFit(Protocol):
    """What the dock reads of the memory held against the hardware's."""

    text: str


class Pricing(Protocol):
    """What the dock reads of a result priced for one hardware profile
    (``backend.cost.price.Pricing``)."""

    label: str
    formulas: str
    estimate: str
    collectives: Sequence[CollectiveCost]
    step_seconds: float
    step_bytes: int
    memory: MemoryFit | None
    step_bytes_across_hosts: int
    step_seconds_fast_link: float
    step_seconds_slow_link: float


@dataclass(frozen=True)
class DockLines:
    """The texts around the table (plain text, the header shown bold; an empty line is
    hidden)."""

    header: str
    status: str
    meaning: str = BYTES_LINE
    meaning_tip: str = BYTES_HEADER_TIP
    header_tip: str = ""
    totals: str = ""
    traffic: str = ""
    memory: str = ""


def tab_texts(result: Analysis | None) -> tuple[tuple[str, str], tuple[str, str]]:
    """The compiled and predicted tabs' texts and tooltips, naming who compiled the
    collectives and whose prediction it is (a torch_xla capture's compile may be
    torch_xla's own, with GSPMD; Shardy is then shardscope's comparison)."""
    names = partitioners(result)
    by = result.compiled_by if result is not None else None
    if own_compile(by):
        compiled = (
            f"Compiled ({by}, {names.own})",
            f"The collectives of the module {by} compiled, partitioned with {names.own}, "
            "as the script ran it",
        )
    else:
        compiled = (
            "Compiled (XLA, Shardy)" if names.foreign else "Compiled (XLA)",
            "The collectives XLA compiled for the propagated program",
        )
    predicted = "The collectives Shardy's explicit-reshard passes insert before compiling"
    if names.foreign:
        predicted += f" (shardscope's comparison: {names.framework} partitions with {names.own})"
    return compiled, (
        "Shardy's prediction (shardscope)" if names.foreign else "Shardy's prediction",
        predicted + ", each flagged matched or not by a compiled one",
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def compile_state(analysis: Analysis | None) -> tuple[bool, str]:
    """Whether XLA is compiling ``analysis`` (its mesh fits one process and no compile
    came yet), and the note of a mesh too large to compile ("" where it fits)."""
    if analysis is None:
        return False, ""
    size = analysis.mesh.size
    if size > MAX_CPU_DEVICES:
        return False, (
            f"Not compiled: the mesh has {size} devices and one process compiles for at "
            f"most {MAX_CPU_DEVICES}; propagate on a smaller mesh to see the compiled "
            "collectives."
        )
    return analysis.compiled is None and analysis.compile_error is None, ""


def predicted_lines(
    result: Analysis | None,
    *,
    compiled: bool,
    compiling: bool,
    pending: bool,
    note: str,
    hosts: int,
) -> DockLines:
    """The lines over Shardy's prediction: whether the compile runs, failed, was cancelled
    or will not run (``note``), how many collectives and how many a compiled one matched,
    their totals per kind, and on several hosts how many cross them."""
    error = result.compile_error if result is not None else None
    collectives = list(result.collectives) if result is not None else []
    n = len(collectives)
    header = HEADER
    if compiling:
        header += " — compiling…"
    elif error == COMPILE_CANCELLED:
        header += " — compile cancelled"
    elif error:
        header += " — the compile failed"
    elif result is not None and not compiled and note:
        header += " — not compiled"
    if result is None:
        status = "Propagating…" if pending else EMPTY_STATUS
    elif error == COMPILE_CANCELLED:
        status = (
            "The XLA compile was cancelled: propagate again (F5) to see the compiled collectives."
        )
    elif error:
        # said once: most reasons begin "the XLA compile ..." themselves
        said = (
            error
            if error.lower().startswith("the xla compile")
            else (f"the XLA compile failed: {error}")
        )
        status = said[:1].upper() + said[1:]
    elif not compiled and note:
        status = note
    elif n == 0:
        status = "Shardy inserts no collective: nothing moves between devices."
    else:
        matched = [m for m in (result.predicted_matched or []) if m is not None]
        flags = f"; {sum(matched)} of {len(matched)} matched by a compiled one" if compiled else ""
        status = (
            f"{_plural(n, 'collective')} Shardy inserts before compiling{flags} (choose one "
            "to outline its device groups on the mesh)."
        )
    totals = _totals(collectives)
    crossing = sum(1 for c in getattr(result, "predicted_crossing", None) or () if c)
    traffic = ""
    if hosts > 1 and result is not None:
        traffic = (
            f"On {hosts} hosts: {crossing} of {n} predicted collectives cross hosts (the "
            "compiled ones give the bytes across hosts)"
        )
    return DockLines(
        header,
        status,
        totals="Per device: " + totals if totals else "",
        traffic=traffic,
    )


def _totals(collectives: Sequence) -> str:
    """``all-gather 2× 1.5 KiB · all-reduce 1× 512 B — total 2.0 KiB``; "" for none."""
    totals = totals_by_kind(collectives)
    parts = [f"{k} {n}× {bytes_text(b)}" for k, (n, b) in sorted(totals.items())]
    if not parts:
        return ""
    return " · ".join(parts) + f" — total {bytes_text(sum(b for _, b in totals.values()))}"


def compiled_lines(
    result: Analysis,
    compiled: Sequence[CompiledCollective],
    pricing: Pricing | None,
    hosts: int,
) -> DockLines:
    """The lines over the compiled program's collectives: who compiled it, how many were
    written by the user or inserted, the formula of the times, the totals per call, the
    traffic across hosts and the memory."""
    devices = _plural(result.mesh.size, "fake CPU device")
    framework = getattr(result, "compiled_by", None)
    if framework and framework != "shardscope":
        header = f"{framework}'s own compiled module (GSPMD), as the script ran it"
        header_tip = (
            f"The collectives of the partitioned, optimized module {framework} compiled "
            f"for this graph when the script ran (its XLA dump); edit the mesh or a spec "
            f"and shardscope compiles the edited program itself"
        )
    else:
        header = COMPILED_HEADER
        header_tip = (
            "The annotated program compiled with XLA on fake CPU devices, one per mesh "
            "device: the collectives of its partitioned, optimized module"
        )
    n = len(compiled)
    status = "The compiled program moves nothing between devices."
    if n:
        users = sum(1 for c in compiled if c.origin == "user")
        mixed = sum(1 for c in compiled if c.origin == "mixed")
        unmatched = sum(1 for c in compiled if not c.predicted)
        both = f", {mixed} combining the user's and the partitioner's" if mixed else ""
        status = (
            f"{_plural(n, 'collective instruction')} in the compiled program ({users} written "
            f"by the user, {n - users - mixed} inserted by the partitioner{both}; {unmatched} "
            "not in Shardy's prediction): choose one to see why."
        )
    totals = _totals(compiled)
    if totals:
        totals = "Per device per call: " + totals
        if pricing is not None:
            totals += f"; est. step {time_text(pricing.step_seconds)} on {pricing.label}"
    fit = pricing.memory.text if pricing and pricing.memory else None
    return DockLines(
        f"{header} · {devices}",
        status,
        meaning=f"Est. time on {pricing.label}: {pricing.formulas}" if pricing else BYTES_LINE,
        meaning_tip=f"{pricing.estimate}\n\n{BYTES_HEADER_TIP}" if pricing else BYTES_HEADER_TIP,
        header_tip=header_tip,
        totals=totals,
        traffic=traffic_text(compiled, pricing, hosts),
        memory=memory_text(result.memory, fit)
        or (MEMORY_MISSING if getattr(result.compiled, "early_stopped", False) else ""),
    )


def traffic_text(
    compiled: Sequence[CompiledCollective], pricing: Pricing | None, hosts: int
) -> str:
    """``On 2 hosts: 3 of 5 collectives cross hosts · per step across hosts 1.5 MiB
    (DCN, 12.0 µs) · within hosts 3.0 MiB (ICI, 2.10 µs)``; "" on one host."""
    if hosts < 2:
        return ""
    crossing = sum(1 for c in compiled if c.crosses_hosts)
    text = f"On {hosts} hosts: {crossing} of {len(compiled)} compiled collectives cross hosts"
    if pricing is None:
        return text
    links = [link.name for link in getattr(pricing, "links", ())]
    fast = links[0] if links else "the fast link"
    slow = links[-1] if len(links) > 1 else "the slow link"
    staying, beside = within_hosts_split(pricing)
    also = f"; they also send {bytes_text(beside)} within hosts" if beside else ""
    across = (
        f"per step across hosts {bytes_text(pricing.step_bytes_across_hosts)} ({slow}, "
        f"{time_text(pricing.step_seconds_slow_link)}{also})"
    )
    if crossing == len(compiled):
        return f"{text} · {across} · none stays within hosts"
    inside = (
        f"within hosts {bytes_text(staying)} ({fast}, {time_text(pricing.step_seconds_fast_link)})"
    )
    return f"{text} · {across} · {inside}" if crossing else f"{text} · {inside}"


def groups_text(what: str, axes: Sequence[str] | None, groups: Sequence[Sequence[int]]) -> str:
    """``all_gather over data: 2 groups of 4 devices, outlined on the mesh: {0, 2} …``."""
    if not groups:
        return ""
    shown = " ".join("{" + ", ".join(map(str, g)) + "}" for g in groups[:16])
    more = f" … {len(groups) - 16} more" if len(groups) > 16 else ""
    over = "+".join(axes) if axes else "no whole mesh axis"
    return (
        f"{what} over {over}: {_plural(len(groups), 'group')} of {len(groups[0])} devices, "
        f"outlined on the mesh: {shown}{more}"
    )


def permute_text(c: CompiledCollective, groups: Sequence[Sequence[int]]) -> str:
    """``collective-permute over data: 2 source→target pairs, outlined on the mesh: 0→1 …``."""
    pairs = len(c.device_groups or ())
    return (
        f"collective-permute over {'+'.join(c.axes or ()) or 'no whole mesh axis'}: "
        f"{_plural(pairs, 'source→target pair')}, outlined on the mesh: "
        + " ".join(f"{g[0]}→{g[-1]}" for g in groups[:16])
    )


def memory_text(memory: dict | None, fit: str | None) -> str:
    """``Memory per device, XLA's CPU buffer assignment: holds 3.5 KiB (arguments +
    outputs + temporaries - aliased), fits in 16 GB: <1% · arguments 1.5 KiB · …`` (what
    the buffers hold and its fit first: the line may be cut)."""
    if not memory:
        return ""
    held = f"holds {bytes_text(held_bytes(memory))} ({HELD_WORDS})"
    if fit:
        held += f", {fit}"
    parts = [
        f"{word} {bytes_text(int(memory[key]))}" for key, word in MEMORY_PARTS if key in memory
    ]
    return f"{MEMORY_LABEL}: " + " · ".join([held, *parts])


def explain_text(c: CompiledCollective, graph: ProgramGraph | None) -> str:
    """``y: had [data, _] → needed [_, _] · the cause`` (what is not known says so)."""
    cause = c.cause
    if cause is None:
        where = line_text(c)
        op = op_label(graph, main_op(c))
        return f"{c.kind} for {op} at {where}: why it is there is not worked out for it."
    if cause.kind == "combined":
        parts = [
            f"{operand_label(j, t)}: {_one_cause(t.cause)}"
            for j, t in enumerate(c.tensors)
            if t.cause is not None
        ]
        return f"XLA combined {len(parts)} {c.kind}s into one:\n" + "\n".join(parts)
    return _one_cause(cause)


def _one_cause(cause: CollectiveCause) -> str:
    """``y: had [data, _] → needed [_, _] · why`` for one moved tensor; the user's own
    collective is its line."""
    if cause.kind == "user":
        return cause.text or cause.kind
    tensor = cause.tensor or "its tensor"
    shardings = (
        f"{tensor}: had {dims_text(cause.had)} → needed {dims_text(cause.needed)}"
        if cause.had is not None or cause.needed is not None
        else f"{tensor}: the two shardings are not known"
    )
    text = cause.text or cause.kind
    line = f" (line {cause.line})" if cause.line is not None else ""
    if f"line {cause.line}" in text:
        line = ""
    return f"{shardings} · {text}{line}"
