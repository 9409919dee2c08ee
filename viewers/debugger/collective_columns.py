"""The Collectives dock's two tables as data: their rows, their columns, and the words
their cells use. Nothing here touches Qt, so the cells are read and tested without a
window.

Bytes per device follow ``backend.propagation.collectives.bytes_per_device``: with ``S``
the bytes of the collective's result one device holds and ``N`` the devices of one
group, an all-gather moves ``S(N-1)/N``, an all-reduce ``2S(N-1)/N``, a reduce-scatter
``S(N-1)``, an all-to-all ``S(N-1)/N``, a collective-permute ``S``, an all-slice nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardscope.backend.columns import Column, column_index, column_names
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.units import bytes_text, seconds_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.run.result import CompiledCollective

NOT_EXPLAINED = "—"
CROSSES, WITHIN = "crosses", "within"
# What "bytes per device" counts for each kind (S: bytes of the result one device holds,
# N: devices in one group).
BYTES_MEANING = {
    "all_gather": "S·(N-1)/N: each device receives the N-1 pieces it lacks",
    "all_slice": "0: each device keeps a slice of what it holds",
    "all_reduce": "2·S·(N-1)/N: a ring reduce-scatter then all-gather",
    "reduce_scatter": "S·(N-1): each device sends N-1 of its N pieces of the input",
    "all_to_all": "S·(N-1)/N: each device keeps one of N pieces and sends the rest",
    "collective_permute": "S: each device sends its whole shard to another",
}
BYTES_HEADER_TIP = (
    "Bytes one device sends or receives for the collective. S = bytes of the result one "
    "device holds, N = devices in one group (the product of the sizes of its axes).\n"
    + "\n".join(f"{kind}: {text}" for kind, text in BYTES_MEANING.items())
)


def totals_by_kind(collectives: Sequence) -> dict[str, tuple[int, int]]:
    """Per kind: how many collectives and their bytes per device added up (predicted
    collectives' ``bytes_per_device`` or compiled ones' ``bytes`` times the runs per
    call)."""
    out: dict[str, tuple[int, int]] = {}
    for c in collectives:
        moved = getattr(c, "bytes_per_device", None)
        if moved is None:
            moved = c.bytes * c.runs_per_call
        n, b = out.get(c.kind, (0, 0))
        out[c.kind] = (n + 1, b + moved)
    return out


def time_text(seconds: float | None) -> str:
    """``12.3 µs`` (``units.seconds_text``); ``—`` when unknown."""
    return NOT_EXPLAINED if seconds is None else seconds_text(seconds)


def op_label(graph: ProgramGraph | None, op: int | None) -> str:
    """``stablehlo.add (op 1)``; ``—`` without an op."""
    if op is None:
        return NOT_EXPLAINED
    if graph is None or not 0 <= op < len(graph.ops):
        return f"op {op}"
    return f"{graph.ops[op].name} (op {op})"


def compiled_ops(c: CompiledCollective) -> list[int]:
    """The program ops the operands of ``c`` serve, each once, in operand order."""
    out: list[int] = []
    for t in c.tensors:
        if t.op is not None and t.op not in out:
            out.append(t.op)
    return out


def main_op(c: CompiledCollective) -> int | None:
    """The op choosing ``c`` selects: the one its cause names, else its first operand's,
    else the op holding it."""
    if c.cause is not None and c.cause.op is not None:
        return c.cause.op
    ops = compiled_ops(c)
    return ops[0] if ops else c.holder


def line_text(c: CompiledCollective) -> str:
    """``mlp.py:14`` for the first operand's line; ``+N`` where others have other lines."""
    lines: list[tuple[str, int]] = []
    for t in c.tensors:
        if t.line is not None and (t.file, t.line) not in lines:
            lines.append((t.file, t.line))
    if not lines and c.line is not None:
        lines.append((c.file, c.line))
    if not lines:
        return NOT_EXPLAINED
    file, line = lines[0]
    more = f" +{len(lines) - 1}" if len(lines) > 1 else ""
    return f"{os.path.basename(file) or '?'}:{line}{more}"


def hosts_text(crosses: bool | None) -> str:
    """``crosses``, ``within`` or ``—`` (an all-slice, or not known)."""
    return NOT_EXPLAINED if crosses is None else CROSSES if crosses else WITHIN


def compiled_tip(c: CompiledCollective, graph: ProgramGraph | None) -> str:
    """The tooltip of a compiled collective's row: its instruction, groups, operands."""
    lines = [f"{c.name or c.kind} in {c.computation or '?'}: {c.groups_text or 'no groups'}"]
    if c.runs_per_call > 1:
        lines.append(f"runs {c.runs_per_call}× per call (the loops around it)")
    for t in c.tensors[:8]:
        where = f"{os.path.basename(t.file)}:{t.line}" if t.line is not None else "no line"
        lines.append(f"  {op_label(graph, t.op)} ← {t.op_name} ({where})")
    if len(c.tensors) > 8:
        lines.append(f"  … {len(c.tensors) - 8} more operands")
    if c.predicted:
        lines.append(
            "predicted as " + ", ".join(f"{p.kind} over {'+'.join(p.axes)}" for p in c.predicted)
        )
    else:
        lines.append("Shardy's prediction has no collective that matches it")
    return "\n".join(lines)


@dataclass(frozen=True)
class CompiledRow:
    """One compiled collective as its row reads it: the collective, the graph naming its
    ops, and its price where priced (seconds per call, bytes one call sends across hosts,
    and the formula that gave the time)."""

    c: CompiledCollective
    graph: ProgramGraph | None
    seconds: float | None = None
    across: int | None = None
    time_tip: str = ""

    @property
    def ops(self) -> list[int]:
        """The program ops its operands serve."""
        return compiled_ops(self.c)

    @property
    def op_text(self) -> str:
        """``stablehlo.dot_general (op 5) +1``, inside its holder where it has one."""
        ops = self.ops
        op = op_label(self.graph, ops[0] if ops else None)
        if len(ops) > 1:
            op += f" +{len(ops) - 1}"
        if self.c.holder is not None and self.c.holder not in ops:
            op = f"in {op_label(self.graph, self.c.holder)}: {op}"
        return op

    @property
    def tip(self) -> str:
        """The row's tooltip (``compiled_tip``)."""
        return compiled_tip(self.c, self.graph)


def tensor_text(c: CompiledCollective) -> str:
    """The moved tensor's name; ``3 tensors`` for a combined collective."""
    if c.cause is not None and c.cause.kind == "combined":
        return f"{len(c.tensors)} tensors"
    return c.cause.tensor if c.cause is not None and c.cause.tensor else NOT_EXPLAINED


def pass_text(c: CompiledCollective) -> str:
    """``forward``, ``backward`` or ``both`` (a combined collective of each)."""
    ways = {t.direction for t in c.tensors if t.direction}
    if not ways and c.cause is not None and c.cause.direction:
        ways = {c.cause.direction}
    if not ways:
        return NOT_EXPLAINED
    return ways.pop() if len(ways) == 1 else "both"


def _cause_text(c: CompiledCollective) -> str | None:
    return c.cause.text if c.cause is not None and c.cause.text else None


def _known(value: float | None, unknown: float) -> float:
    return value if value is not None else unknown


# The cost first (in sight in a narrow dock), the cause last (it takes what is left).
COMPILED: tuple[Column[CompiledRow], ...] = (
    Column("Kind", lambda r: r.c.kind),
    Column("Axes", lambda r: "+".join(r.c.axes) if r.c.axes else NOT_EXPLAINED),
    Column("Group", lambda r: str(r.c.group_size), lambda r: r.c.group_size),
    Column("Operands", lambda r: str(r.c.operands), lambda r: r.c.operands),
    Column(
        "Bytes / device",
        lambda r: bytes_text(r.c.bytes),
        lambda r: r.c.bytes,
        tooltip=BYTES_HEADER_TIP,
    ),
    Column(
        "Est. time",
        lambda r: time_text(r.seconds),
        lambda r: _known(r.seconds, -1.0),
        tooltip="Estimated seconds per call of the program on the chosen hardware (the "
        "formula above the table), times the runs of the loops around it",
        tip=lambda r: r.time_tip,
    ),
    Column(
        "Hosts",
        lambda r: hosts_text(r.c.crosses_hosts),
        lambda r: int(r.c.crosses_hosts),
        tooltip="crosses: a device group holds devices of two hosts (it runs over the slow "
        "link); within: every group stays on one host",
        several_hosts=True,
    ),
    Column(
        "Across hosts",
        lambda r: bytes_text(r.across) if r.across is not None else NOT_EXPLAINED,
        lambda r: _known(r.across, -1),
        tooltip="Bytes one call of the program sends across hosts, summed over all devices "
        "(a ring sends each device's bytes to the next device of its group)",
        several_hosts=True,
    ),
    Column("Tensor", lambda r: tensor_text(r.c), max_width=260),
    Column("Op", lambda r: r.op_text, lambda r: r.ops[0] if r.ops else -1, max_width=260),
    Column("Line", lambda r: line_text(r.c)),
    Column(
        "Origin",
        lambda r: r.c.origin or NOT_EXPLAINED,
        tooltip="user: written in the program (inside shard_map); partitioner: inserted by "
        "XLA; mixed: XLA combined collectives of both into one",
    ),
    Column(
        "Pass",
        lambda r: pass_text(r.c),
        tooltip="forward, or backward: a collective of the gradient (JAX names the ops of "
        "a gradient's transpose transpose(...)); both: XLA combined collectives of each",
    ),
    Column(
        "Prediction",
        lambda r: "matched" if r.c.predicted else "none",
        tooltip="matched: Shardy's prediction has this collective; none: only the compiler has it",
    ),
    Column("Cause", lambda r: _cause_text(r.c) or NOT_EXPLAINED, tip=lambda r: _cause_text(r.c)),
)


@dataclass(frozen=True)
class PredictedRow:
    """One collective of Shardy's prediction as its row reads it: whether a compiled one
    matched it and whether its groups cross hosts (None: not known)."""

    c: Collective
    graph: ProgramGraph | None
    matched: bool | None = None
    crosses: bool | None = None

    @property
    def tip(self) -> str:
        """The row's tooltip: where it leaves the tensor and what its bytes count."""
        meaning = BYTES_MEANING.get(self.c.kind, "?")
        return f"{self.c.kind} → {dims_text(self.c.out_spec)}; bytes per device = {meaning}"


def _tensor(r: PredictedRow) -> str:
    return r.graph.values[r.c.value].display_name if r.graph and r.c.value is not None else ""


PREDICTED: tuple[Column[PredictedRow], ...] = (
    Column("Kind", lambda r: r.c.kind),
    Column("Axes", lambda r: "+".join(r.c.axes) or NOT_EXPLAINED),
    Column(
        "Group",
        lambda r: str(r.c.group_size),
        lambda r: r.c.group_size,
        tooltip="Devices in one group of the collective",
    ),
    Column("Tensor", _tensor),
    Column(
        "Op",
        lambda r: f"{r.c.op_name} (op {r.c.op})" if r.c.op is not None else "return",
        lambda r: _known(r.c.op, -1),
    ),
    Column(
        "Bytes / device",
        lambda r: bytes_text(r.c.bytes_per_device),
        lambda r: r.c.bytes_per_device,
        tooltip=BYTES_HEADER_TIP,
    ),
    Column(
        "Compiled",
        lambda r: (
            NOT_EXPLAINED if r.matched is None else "matched" if r.matched else "not compiled"
        ),
        tooltip="matched: a compiled collective matches it; not compiled: XLA emits none "
        "like it; —: not compiled yet, or an all-slice (it moves nothing)",
    ),
    Column(
        "Hosts",
        lambda r: hosts_text(r.crosses),
        tooltip="crosses: a device group over its axes holds devices of two hosts; within: "
        "every group stays on one host",
        several_hosts=True,
    ),
)

COMPILED_COLUMNS = column_names(COMPILED)
PREDICTED_COLUMNS = column_names(PREDICTED)
COMPILED_BYTES_COLUMN = column_index(COMPILED, "Bytes / device")
BYTES_COLUMN = column_index(PREDICTED, "Bytes / device")
TIME_COLUMN = column_index(COMPILED, "Est. time")
ACROSS_COLUMN = column_index(COMPILED, "Across hosts")
# The Hosts cell of a crossing row is coloured in both tables.
HOSTS_COLUMN = column_index(COMPILED, "Hosts")
PREDICTED_HOSTS_COLUMN = column_index(PREDICTED, "Hosts")
