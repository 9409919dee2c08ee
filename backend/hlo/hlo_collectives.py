"""Collectives of a compiled HLO module: kind, device groups, shapes, bytes, source.

Read from ``compiled.as_text()``. Kinds: ``all-gather``, ``all-reduce``,
``reduce-scatter``, ``all-to-all``, ``collective-permute`` (and ``ragged-all-to-all``,
``collective-broadcast``). An asynchronous pair (``all-reduce-start`` /
``all-reduce-done``, the form XLA's GPU compiler uses; this machine's CPU compiler writes
none) is read as one collective whose shapes are the done's result. A collective with
several operands is one collective with ``operands`` arrays: seen here, XLA's combiner
merging the all-reduces of a training step into one tuple-shaped all-reduce (its
``op_name`` lists each operand's op), and the CPU compiler writing a tiled all-to-all as
one operand per piece. Each operand's own op and line are those of the
``get-tuple-element`` that takes it out of the tuple: the combiner gives it the metadata
of the all-reduce it replaced (seen: a combined gradient all-reduce's two elements naming
lines 7 and 8, the combined instruction line 7 alone).

Lines are the user's (``FrameTable.user_source``): the innermost frame outside the
libraries. A collective inside a loop body is listed once, as the text holds it, with
the while loops around it (``loops``, outermost first) and how many times one call runs
it (``runs_per_call``): the product of the loops' trip counts as XLA's while loop
analysis writes them in each while's ``backend_config`` (``"known_trip_count":{"n":"3"}``,
seen on this machine's CPU compiler for a ``lax.scan`` over 3 steps and a
``fori_loop(0, 2, ...)``); a loop whose count XLA does not know counts once.
"""

from __future__ import annotations

import math
import re
from typing import TypedDict

from shardscope.backend.hlo.frames import FrameTable
from shardscope.backend.hlo.groups import GroupsError, parse_groups, to_device_ids
from shardscope.backend.hlo.syntax import COMPUTATION, FRAME, HEAD, OP_NAME

KINDS = (
    "all-gather",
    "all-reduce",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "ragged-all-to-all",
    "collective-broadcast",
)
_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
_DIMS = re.compile(r"\bdimensions=\{([0-9,]*)\}")
_ELEMENT = re.compile(r"\bget-tuple-element\(%(?P<of>[\w.\-]+)\),\s*index=(?P<index>\d+)")
_COMBINED = re.compile(r"^(?P<prefix>.*?/)?\((?P<parts>.*)\)$")
# Computations an instruction calls, by the attribute that names them.
_CALLS = re.compile(
    r"\b(?P<key>body|condition|calls|to_apply|true_computation|false_computation)"
    r"=%(?P<name>[\w.\-]+)"
)
_CALL_LISTS = re.compile(r"\b(?:branch_computations|called_computations)=\{(?P<names>[^}]*)\}")
_TRIP_COUNT = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_OPERAND = re.compile(r"%([\w.\-]+)")
# Bytes per element of HLO's primitive types.
_WIDTH = {
    "pred": 1,
    "s2": 1,
    "u2": 1,
    "s4": 1,
    "u4": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}


class HloTensor(TypedDict):
    """One operand of a collective: the op it serves and the user's line."""

    op_name: str
    file: str
    line: int | None


class HloLoop(TypedDict):
    """A while loop around a collective: its instruction, op and trip count."""

    name: str  # the while instruction's name, ``while.44``
    op_name: str
    line: int | None
    trip_count: int | None  # None: XLA does not know it


class HloCollective(TypedDict):
    """One collective of a compiled module (plain data: it crosses processes as JSON)."""

    name: str  # the instruction's name, ``all-reduce.3``
    kind: str
    computation: str  # the computation that holds it (``main``, a loop body...)
    operands: int  # arrays it moves: more than one for a combined (tuple) collective
    shapes: list[list[int]]  # the result shape of each operand, per device
    dtypes: list[str]
    result_bytes: int  # bytes of its results on one device
    groups: list[list[int]] | None  # device ids; pairs (source, target) for a permute
    groups_text: str
    dimensions: list[int]
    op_name: str
    file: str
    line: int | None
    tensors: list[HloTensor]  # one per operand
    inputs: list[str]  # the instructions it reads, by name (``param.1``, ``fusion.3``)
    loops: list[HloLoop]  # the while loops around its computation, outermost first
    runs_per_call: int  # the product of their known trip counts (1 outside loops)


def element_bytes(dtype: str) -> int:
    """Bytes per element of HLO type ``dtype`` (``f32`` -> 4; fp8 kinds -> 1)."""
    return _WIDTH.get(dtype, 1 if dtype.startswith("f8") else 4)


def _split_type(rest: str) -> tuple[str, str]:
    """``(type text, after it)`` for the text after ``%x = ``: a tuple type is balanced."""
    if rest.startswith("("):
        head = _balanced(rest, "(", ")")
        return head, rest[len(head) :].lstrip()
    head, _, tail = rest.partition(" ")
    return head, tail


def _balanced(text: str, opening: str, closing: str) -> str:
    """The start of ``text`` (which opens with ``opening``) up to the bracket that closes
    it; all of ``text`` if none does."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def _attribute(rest: str, key: str) -> str | None:
    """The value text of attribute ``key=`` in an instruction's tail (balanced braces)."""
    at = rest.find(f"{key}=")
    if at < 0:
        return None
    value = rest[at + len(key) + 1 :]
    if value.startswith("{"):
        return _balanced(value, "{", "}")
    if value.startswith("mesh["):
        end = value.find("}")
        return value[: end + 1] if end >= 0 else value
    m = re.match(r"\[[0-9,]*\]<=\[[0-9,]*\](?:T\([0-9,]*\))?", value)
    return m.group(0) if m else value.split(",", 1)[0]


def read_collectives(
    text: str, assignment: list[int] | None = None, num_devices: int | None = None
) -> list[HloCollective]:
    """Every collective of HLO module ``text``, in text order.

    ``assignment`` maps positions in the executable's device assignment to device ids
    (``compiled.runtime_executable().local_devices()`` on one host); without it groups
    hold positions. ``num_devices`` resolves ``replica_groups={}`` (all devices).
    """
    frames = FrameTable(text)
    out: list[HloCollective] = []
    starts: dict[str, HloCollective] = {}
    by_name: dict[str, HloCollective] = {}
    elements: dict[tuple[str, int], HloTensor] = {}
    computation = ""
    callers: dict[str, tuple[str, HloLoop | None]] = {}
    for line in _lines_read(text):
        _note_calls(line, computation, frames, callers)
        element = _ELEMENT.search(line) if "get-tuple-element(" in line else None
        if element:
            elements[element["of"], int(element["index"])] = _tensor(line, frames)
        comp = COMPUTATION.match(line)
        if comp and not line.startswith((" ", "\t")):
            computation = comp["name"]
            continue
        head = HEAD.match(line)
        if not head:
            continue
        type_text, tail = _split_type(line[head.end() :])
        opcode, paren, args_rest = tail.partition("(")
        if not paren:
            continue
        opcode = opcode.strip()
        if opcode.endswith("-done"):
            start = _started(opcode, args_rest, starts)
            if start is not None:
                _set_shapes(start, type_text)
                by_name[head["name"]] = start
            continue
        is_start = opcode.endswith("-start") and opcode[: -len("-start")] in KINDS
        kind = opcode[: -len("-start")] if is_start else opcode
        if kind not in KINDS:
            continue
        groups, groups_text = _groups(kind, args_rest, assignment, num_devices)
        entry = _entry(head["name"], kind, computation, args_rest, frames)
        entry["groups"], entry["groups_text"] = groups, groups_text
        _set_shapes(entry, type_text, start=is_start)
        if is_start:
            starts[head["name"]] = entry
        by_name[head["name"]] = entry
        out.append(entry)
    for entry in out:
        entry["loops"] = _loops_around(entry["computation"], callers)
        entry["runs_per_call"] = math.prod(loop["trip_count"] or 1 for loop in entry["loops"])
    for name, entry in by_name.items():
        if not entry["tensors"]:
            found = [elements.get((name, i)) for i in range(entry["operands"])]
            entry["tensors"] = _tensors(entry, found)
    return out


def _lines_read(text: str) -> list[str]:
    """The lines of ``text`` that ``read_collectives`` reads: computation headers (not
    indented), instructions that call computations, ``get-tuple-element`` and those that
    name a collective's opcode. The rest (most of a compiled module) it would pass over."""
    return [
        line
        for line in text.splitlines()
        if line[:1] not in " \t"
        or "=%" in line
        or "computations={" in line
        or "get-tuple-element(" in line
        or "all-" in line
        or "reduce-scatter" in line
        or "collective-" in line
    ]


def _started(opcode: str, args_rest: str, starts: dict[str, HloCollective]) -> HloCollective | None:
    """The collective an async ``*-done`` completes, or None."""
    if opcode[: -len("-done")] not in KINDS:
        return None
    operand = re.match(r"\s*%([\w.\-]+)", args_rest)
    return starts.get(operand.group(1)) if operand else None


def _groups(
    kind: str, args_rest: str, assignment: list[int] | None, num_devices: int | None
) -> tuple[list[list[int]] | None, str]:
    """A collective's device groups (None where unreadable) and the text they came from."""
    key = "source_target_pairs" if kind == "collective-permute" else "replica_groups"
    groups_text = _attribute(args_rest, key) or ""
    try:
        groups = parse_groups(groups_text, num_devices) if groups_text else None
        if groups is not None and assignment is not None:
            groups = to_device_ids(groups, assignment)
    except GroupsError:
        groups = None
    return groups, groups_text


def _entry(
    name: str, kind: str, computation: str, args_rest: str, frames: FrameTable
) -> HloCollective:
    """A collective as its own line reads, before its shapes, groups, loops and tensors."""
    own = _tensor(args_rest, frames)
    dims = _DIMS.search(args_rest)
    args_text = _balanced("(" + args_rest, "(", ")")
    return {
        "name": name,
        "kind": kind,
        "computation": computation,
        "operands": 0,
        "shapes": [],
        "dtypes": [],
        "result_bytes": 0,
        "groups": None,
        "groups_text": "",
        "dimensions": [int(d) for d in dims[1].split(",") if d] if dims else [],
        "op_name": own["op_name"],
        "file": own["file"],
        "line": own["line"],
        "tensors": [],
        "inputs": _OPERAND.findall(args_text),
        "loops": [],
        "runs_per_call": 1,
    }


def _note_calls(
    line: str, computation: str, frames: FrameTable, callers: dict[str, tuple[str, HloLoop | None]]
) -> None:
    """Record, for each computation ``line``'s instruction calls, the computation that
    calls it and the while loop it is the body or condition of (None: another call)."""
    # Only an instruction that calls a computation names one after "=%" (``body=%b``,
    # ``to_apply=%add``) or in a list (``branch_computations={%a, %b}``).
    if "=%" not in line and "computations={" not in line:
        return
    head = HEAD.match(line)
    if not head or not computation:
        return
    called = [(m["key"], m["name"]) for m in _CALLS.finditer(line)]
    for m in _CALL_LISTS.finditer(line):
        called += [("calls", n) for n in _OPERAND.findall(m["names"])]
    if not called:
        return
    loop: HloLoop | None = None
    if any(key == "body" for key, _ in called):
        trip = _TRIP_COUNT.search(line)
        own = _tensor(line, frames)
        loop = {
            "name": head["name"],
            "op_name": own["op_name"],
            "line": own["line"],
            "trip_count": int(trip[1]) if trip else None,
        }
    for key, name in called:
        # The first caller is kept: a computation called from several places is
        # attributed to the first.
        callers.setdefault(name, (computation, loop if key in ("body", "condition") else None))


def _loops_around(
    computation: str, callers: dict[str, tuple[str, HloLoop | None]]
) -> list[HloLoop]:
    """The while loops whose bodies hold ``computation``, outermost first."""
    loops: list[HloLoop] = []
    seen = {computation}
    while computation in callers:
        computation, loop = callers[computation]
        if computation in seen:
            break
        seen.add(computation)
        if loop is not None:
            loops.append(loop)
    return loops[::-1]


def _tensor(line: str, frames: FrameTable) -> HloTensor:
    """The op name and user line of an instruction's metadata."""
    name_m = OP_NAME.search(line)
    frame_m = FRAME.search(line)
    source = frames.user_source(int(frame_m[1])) if frame_m else None
    return {
        "op_name": name_m[1] if name_m else "",
        "file": source.file if source else "",
        "line": source.line if source else None,
    }


def _tensors(entry: HloCollective, elements: list[HloTensor | None]) -> list[HloTensor]:
    """Each operand's op and line: its ``get-tuple-element``'s where one takes it out,
    else the collective's own (the ``i``-th name of a combined ``(a:b)`` op name)."""
    names = operand_names(entry["op_name"])
    out = []
    for i, element in enumerate(elements):
        if element is not None and element["op_name"]:
            out.append(element)
            continue
        name = names[i] if len(names) == len(elements) else entry["op_name"]
        out.append({"op_name": name, "file": entry["file"], "line": entry["line"]})
    return out


def operand_names(op_name: str) -> list[str]:
    """The op of each operand a combined op name lists: ``jit(f)/(a:b)`` ->
    ``[jit(f)/a, jit(f)/b]``; a plain name is one."""
    m = _COMBINED.match(op_name)
    if not m:
        return [op_name] if op_name else []
    prefix = m["prefix"] or ""
    return [prefix + part for part in _split_outside(m["parts"])]


def _split_outside(text: str) -> list[str]:
    """``text`` split on ``:`` outside brackets: ``a(b:c):d`` -> ``[a(b:c), d]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ":" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _set_shapes(entry: HloCollective, type_text: str, *, start: bool = False) -> None:
    arrays = [(t, [int(d) for d in dims.split(",") if d]) for t, dims in _ARRAY.findall(type_text)]
    if start and len(arrays) > 1:
        # A start whose done is not seen: its tuple is read as (operands..., results...).
        arrays = arrays[len(arrays) // 2 :]
    entry["shapes"] = [s for _, s in arrays]
    entry["dtypes"] = [t for t, _ in arrays]
    entry["operands"] = len(arrays)
    total = 0
    for t, shape in arrays:
        n = 1
        for d in shape:
            n *= d
        total += n * element_bytes(t)
    entry["result_bytes"] = total
