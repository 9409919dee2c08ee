"""What a run found: each device's shards, the compiled collectives, timings, memory.

``RunResult.to_json()`` is what ``run --json`` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shardscope.backend.json_form import JsonForm, json_field
from shardscope.backend.units import bytes_text

if TYPE_CHECKING:
    from shardscope.backend.sharding.hosts import Hosts


@dataclass(frozen=True)
class Shard(JsonForm):
    """One device's piece of an array, as ``jax.Array.addressable_shards`` gives it."""

    device: int
    index: tuple[tuple[int, int], ...]  # [start, stop) per dimension
    shape: tuple[int, ...]
    checksum: str  # CRC-32 of the piece's bytes, row-major
    # The piece's values for heat maps, row-major in ``values_shape``: all of them for a
    # small piece, block means for a large one (``shards.preview``); None when not asked.
    values: tuple[float | None, ...] | None = json_field(omit=True, default=None)
    values_shape: tuple[int, ...] | None = json_field(omit=True, default=None)
    # The host (process of a multi-host run, ``sharding.hosts``) that owns the device.
    host: int = 0
    # Per dimension, how many elements of the device's tile lie past ``index``: padding
    # of an uneven sharding (``run.padding``); empty or zeros where there is none.
    padding: tuple[int, ...] = ()

    @property
    def pooled(self) -> bool:
        """Whether ``values`` are block means rather than every value."""
        return self.values_shape is not None and tuple(self.values_shape) != tuple(self.shape)

    @property
    def tile(self) -> tuple[int, ...]:
        """The shape of the tile the device holds: its piece and its padding."""
        extra = tuple(self.padding) + (0,) * (len(self.shape) - len(self.padding))
        return tuple(n + p for n, p in zip(self.shape, extra, strict=True))

    @property
    def padding_text(self) -> str:
        """The padding in the device's tile in a few words, as
        ``tile [2, 32] with padding 1 in dim 0``; empty where there is none."""
        dims = [f"{p} in dim {d}" for d, p in enumerate(self.padding) if p]
        if not dims:
            return ""
        return f"tile {list(self.tile)} with padding {dims[0]}" + "".join(
            f", {d}" for d in dims[1:]
        )


@dataclass(frozen=True)
class TensorRun(JsonForm):
    """One argument or output of a run: its sharding and each device's shard."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    spec: str  # spec text (``data,_``); "" for a sharding without one
    hlo_sharding: str
    shards: tuple[Shard, ...]
    # max |sharded - unsharded| / max |unsharded|; None without a reference run.
    max_rel_error: float | None
    # Groups of devices that hold the same piece with different bytes.
    replica_mismatches: tuple[tuple[int, ...], ...] = ()
    error_not_finite: bool = False
    # An output's place in the function's return value, as JAX names it (its
    # ``jax.result_info``: ``result[0]['layers'][0]['wq']``); empty for arguments.
    path: str = ""

    @property
    def where(self) -> str:
        """The output's place in the return value where it says more than ``name``:
        ``[0]['layers'][0]['wq']`` (empty for a lone array and for arguments)."""
        if not self.path.startswith("result") or self.path in ("result", self.name):
            return ""
        return self.path[len("result") :]

    @property
    def label(self) -> str:
        """The name, followed by its place in the return value where that says more:
        ``result[4] [0]['layers'][0]['w_out']``."""
        return f"{self.name} {self.where}" if self.where else self.name

    @property
    def replicas_match(self) -> bool:
        """Whether every device holding the same piece holds the same bytes."""
        return not self.replica_mismatches

    @classmethod
    def from_report(cls, data: dict) -> TensorRun:
        """Read one ``outputs[]`` / ``arguments[]`` entry of the worker's report."""
        return cls(
            data["name"],
            tuple(data["shape"]),
            data["dtype"],
            data["spec"],
            data["hlo_sharding"],
            _shards(data["shards"]),
            data["max_rel_error"],
            tuple(tuple(g) for g in data["replica_mismatches"]),
            data["error_not_finite"],
            data.get("path", ""),
        )


def _shards(records: list[dict]) -> tuple[Shard, ...]:
    """The worker's shard records as Shards; a replica whose values were sent once, with
    another device's record (``values_from``), gets them from there."""
    out = [
        Shard(
            s["device"],
            tuple(tuple(r) for r in s["index"]),
            tuple(s["shape"]),
            s["checksum"],
            tuple(s["values"]) if s["values"] is not None else None,
            _shape_or_none(s.get("values_shape"), s["values"], s["shape"]),
            int(s.get("host", 0)),
            tuple(s.get("padding", ())),
        )
        for s in records
    ]
    by_device = {s.device: s for s in out}
    for i, record in enumerate(records):
        source = by_device.get(record.get("values_from"))  # type: ignore[arg-type]
        if source is not None and out[i].values is None:
            out[i] = replace(out[i], values=source.values, values_shape=source.values_shape)
    return tuple(out)


def _shape_or_none(shape, values, piece) -> tuple[int, ...] | None:
    if values is None:
        return None
    return tuple(shape) if shape is not None else tuple(piece)


@dataclass(frozen=True)
class PredictedRef(JsonForm):
    """A collective propagation predicted (``propagate``'s ``predicted_collectives[]``),
    in short."""

    kind: str  # as HLO names it: ``all-reduce``
    axes: tuple[str, ...]
    op: int | None
    source: str  # the program op's location name, ``jit(f)/layer2/dot_general``
    line: int | None
    bytes: int
    # Its place in ``predicted_collectives``; None where it was not read from that list.
    index: int | None = None


def group_size(kind: str, groups: tuple[tuple[int, ...], ...] | list | None) -> int:
    """Devices of one group of a compiled collective of ``kind`` over ``groups`` (a
    permute's groups are its source-target pairs: 2); 1 without groups."""
    if not groups:
        return 1
    if kind == "collective-permute":
        return 2
    return max(len(g) for g in groups)


@dataclass(frozen=True)
class CollectiveCause(JsonForm):
    """Why one compiled collective is there, in the program's terms.

    ``kind``: ``user`` (written inside ``shard_map``: ``line`` is that line), ``conflict``
    (the op's operands asked for different axes on one factor: ``conflict`` is its index
    in the propagation's conflicts), ``rule`` (the op's sharding rule needs it: a
    contracting dimension sharded, a reduced dimension sharded: partial results added, a
    dimension the op cannot keep sharded), ``shift`` (a slice, concatenate or pad along a
    sharded dimension moves elements across devices: a halo exchange, a rotation),
    ``select`` (the op takes a part of a sharded dimension that some devices hold: the
    others add zeros), ``reshard`` (an explicit reshard or sharding constraint asks for
    another sharding), ``combined`` (XLA combined several collectives into one: each
    operand's own cause is on its ``CollectiveTensor``), ``unknown`` (the text says what
    was examined). ``had`` and ``needed`` are the tensor's sharding before and the one
    its consumer needs, as axes per dimension (None where not known); ``compiled`` is the
    sharding XLA compiled the tensor with where it differs from propagation's (``had`` is
    then that one). ``direction``: ``forward``, or ``backward`` for the collective of a
    gradient's transpose.
    """

    kind: str
    text: str  # one line a user reads
    tensor: str = ""  # the moved tensor's display name
    value: int | None = None  # its graph value id
    op: int | None = None  # the program op that consumes it (or holds the collective)
    had: tuple[tuple[str, ...], ...] | None = None
    needed: tuple[tuple[str, ...], ...] | None = None
    conflict: int | None = None
    # The value whose provenance explains ``had`` (None: none applies).
    provenance: int | None = None
    line: int | None = None
    file: str = ""
    direction: str = ""
    compiled: tuple[tuple[str, ...], ...] | None = None


@dataclass(frozen=True)
class CollectiveTensor(JsonForm):
    """One array a compiled collective moves: the program op it serves and the line, who
    put it there (``origin``: ``user`` or ``partitioner``), ``direction`` (``forward``,
    or ``backward`` in a gradient's transpose) and why (``cause``)."""

    op_name: str  # the HLO metadata's op name, ``jit(f)/layer2/dot_general``
    op: int | None  # the program graph's op of that name (None: none found)
    file: str
    line: int | None
    origin: str = ""
    direction: str = ""
    cause: CollectiveCause | None = None


@dataclass(frozen=True)
class CompiledCollective(JsonForm):
    """One collective of the compiled program, as its HLO text says.

    ``bytes`` is what one device moves (the formulas of ``propagation.predicted_collectives``, on
    the result held by one device); ``predicted`` the predicted collectives it was matched
    with (empty: the compiler inserted one propagation did not predict).
    """

    kind: str
    device_groups: tuple[tuple[int, ...], ...] | None
    shape: tuple[int, ...]
    bytes: int
    source: str  # metadata op_name of the op it serves
    line: int | None
    predicted: tuple[PredictedRef, ...]
    file: str = ""
    name: str = ""
    operands: int = 1
    shapes: tuple[tuple[int, ...], ...] = ()
    result_bytes: int = 0
    groups_text: str = ""
    computation: str = ""
    # The program ops of each operand (a combined collective serves several).
    sources: tuple[str, ...] = ()
    # Each operand's op (its graph id where the program is known) and user line.
    tensors: tuple[CollectiveTensor, ...] = ()
    # The mesh axes its device groups span (None: they span none exactly).
    axes: tuple[str, ...] | None = None
    # ``user``: written in the program (psum, all_gather... inside shard_map);
    # ``partitioner``: inserted by XLA's SPMD partitioner. Empty where not told.
    origin: str = ""
    # Why it is there (None where not explained).
    cause: CollectiveCause | None = None
    # The top-level program op that holds it where it sits in a loop body, a checkpoint,
    # a nested jit or a callee (None: at top level or not known).
    holder: int | None = None
    # How many times one call of the program runs it: the product of the known trip
    # counts of the loops around it (1 outside loops).
    runs_per_call: int = 1
    # Whether any of its device groups holds devices of two hosts (``sharding.hosts``).
    crosses_hosts: bool = False

    @property
    def group_size(self) -> int:
        """Devices of one of its groups (``group_size``): the ``N`` of ``bytes``."""
        return group_size(self.kind, self.device_groups)


def operand_label(index: int, t: CollectiveTensor) -> str:
    """``[1] user, backward``: one operand of a combined collective, who put it there and
    in which pass (``?`` where not told)."""
    return f"[{index}] {t.origin or '?'}, {t.direction or '?'}"


def compiled_text(c: CompiledCollective) -> str:
    """``all-gather over data on y (conflict.py:9): 1.5 KiB per device — why``: one
    compiled collective on one line."""
    axes = "+".join(c.axes) if c.axes else "no whole mesh axis"
    cause = c.cause
    on = f" on {cause.tensor}" if cause is not None and cause.tensor else ""
    lines = sorted({(t.file, t.line) for t in c.tensors if t.line is not None})
    where = ""
    if lines:
        where = " (" + ", ".join(f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in lines[:3])
        where += " …)" if len(lines) > 3 else ")"
    runs = f", {c.runs_per_call}× per call" if c.runs_per_call > 1 else ""
    operands = f" {c.operands} operands" if c.operands > 1 else ""
    why = f" — {cause.text}" if cause is not None and cause.text else ""
    back = " (backward)" if cause is not None and cause.direction == "backward" else ""
    return (
        f"{c.kind}{operands}{back} over {axes}{on}{where}: {bytes_text(c.bytes)} per device"
        f"{runs}{why}"
    )


@dataclass(frozen=True)
class XlaWarningEntry(JsonForm):
    """A warning XLA logged while compiling or running, joined to its op."""

    message: str
    op_name: str
    instruction: str


@dataclass
class RunResult(JsonForm):
    """Everything one run found."""

    program: str
    platform: str
    device_count: int
    mesh: dict[str, int]
    outputs: list[TensorRun]
    arguments: list[TensorRun]
    collectives: list[CompiledCollective]
    # Predicted collectives no compiled one was matched with.
    predicted_only: list[PredictedRef]
    warnings: list[XlaWarningEntry]
    compile_s: float
    run_s: float
    memory: dict[str, int]
    run_times: list[float] = field(default_factory=list)
    # What the run could not do as asked, in one line each (specs it could not apply...).
    notes: list[str] = field(default_factory=list)
    # Whether the unsharded reference's outputs were kept from an earlier run of the same
    # unsharded module on the same inputs (``reference_cache``) rather than computed.
    reference_kept: bool = False
    # Arguments whose data the program file gave (the others are seeded random data).
    concrete_inputs: list[str] = field(default_factory=list)
    # Seconds each stage took, in order (the worker's start and imports, loading, compile,
    # runs, reading shards...); empty where nobody timed them.
    stages: dict[str, float] = field(default_factory=dict)
    # Device id at each row-major mesh position (empty: 0, 1, 2, ...).
    device_order: list[int] = field(default_factory=list)
    # Where the arguments' data came from: "program" (the program file's own arrays for
    # ``concrete_inputs``, seeded random data for the rest) or "seeded" (every argument
    # seeded random data of its shape and dtype: a run of a module, not of its script).
    inputs: str = "program"
    # The processes the run ran as (``run --hosts``), each owning ``device_count / hosts``
    # devices (``sharding.hosts``).
    hosts: int = 1
    hlo_text: str = json_field(omit=True, default="")

    def kinds(self) -> dict[str, int]:
        """Compiled collectives per kind."""
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.kind] = out.get(c.kind, 0) + 1
        return out

    def tensor(self, name: str) -> TensorRun:
        """An argument or output by name (``x``, ``result[0]``)."""
        for t in [*self.outputs, *self.arguments]:
            if t.name == name:
                return t
        raise KeyError(name)


def mark_crossing(
    collectives: Sequence[CompiledCollective], hosts: Hosts
) -> list[CompiledCollective]:
    """``collectives`` with ``crosses_hosts`` set for ``hosts``: whether any device group
    holds devices of two hosts (``sharding.hosts.Hosts.crosses``)."""
    return [replace(c, crosses_hosts=hosts.crosses(c.device_groups)) for c in collectives]


@dataclass(frozen=True)
class OpWarning(JsonForm):
    """A warning XLA logged while compiling, on the program op it is about.

    ``bytes``: for a full rematerialization, what one device receives to hold the whole
    tensor (its size less the device's own piece); 0 where the warning says no size.
    Its JSON form is an ``xla_warnings[]`` entry of ``propagate --json``.
    """

    message: str
    op: int | None
    op_name: str
    line: int | None
    bytes: int = 0


@dataclass(frozen=True)
class Compiled:
    """What XLA compiled of a propagated program: its collectives, whether one of them
    matched each of Shardy's predicted collectives, its memory and its warnings.

    ``collectives`` is ``collectives`` in ``propagate --json``; ``predicted_matched`` has
    one entry per ``PropagationResult.collectives`` (None for an all-slice, which moves
    nothing); ``memory`` is XLA's memory analysis (None where the compile recorded none).
    """

    collectives: tuple[CompiledCollective, ...]
    predicted_matched: tuple[bool | None, ...]
    memory: dict | None
    xla_warnings: tuple[OpWarning, ...] = ()
    # Who compiled: "shardscope" (its own compile), or the framework as the script ran it.
    compiled_by: str = "shardscope"
    warnings: tuple[str, ...] = ()
    # Stopped once XLA's partitioned module was final (``run.early_stop``): the
    # collectives are the finished compile's, the memory is missing.
    early_stopped: bool = False


@dataclass(frozen=True)
class NotCompiled:
    """Why a propagated program has no compile: it failed (``failed``: ``reason`` is the
    error's one line), or it was not made (``reason`` says why, as a warning)."""

    reason: str
    failed: bool = True

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the result's warnings say of it: why it was not made, if not a failure."""
        return () if self.failed else (self.reason,)


CompileOutcome = Compiled | NotCompiled
