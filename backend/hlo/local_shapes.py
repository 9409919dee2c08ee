"""Instructions of a partitioned HLO module: each one's per-device shape and the op it
came from, and the chain of instructions that produced one.

After SPMD partitioning, ``compiled.as_text()`` writes each instruction with the shape one
device holds (``%reduce.6 = f32[4,32]{1,0} reduce(%square.3, ...)``) and, in its metadata,
the program op it came from (``op_name``, ``stack_frame_id``). Set beside the program
value's global shape, the per-device shape tells how many pieces each dimension was cut
into: the sharding XLA compiled, which may differ from the one propagation wrote
(``run.compiled_shardings``). Instructions inside fused computations are read too: a
fusion's ``parameter(k)`` is its caller's ``k``-th operand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from shardscope.backend.hlo.frames import FrameTable
from shardscope.backend.hlo.syntax import COMPUTATION, FRAME, HEAD, OP_NAME

_ARRAY = re.compile(r"^(?P<dtype>[a-z][a-z0-9]*)\[(?P<dims>[0-9,]*)\]")
_OPCODE = re.compile(r"^(?P<opcode>[a-z][\w\-]*)\(")
_CALLS = re.compile(r"\bcalls=%(?P<name>[\w.\-]+)")
_PARAMETER = re.compile(r"^parameter\((?P<index>\d+)\)")
_OPERAND = re.compile(r"%([\w.\-]+)")


@dataclass(frozen=True)
class LocalInstruction:
    """One instruction of a partitioned module, as one device runs it."""

    name: str
    opcode: str
    shape: tuple[int, ...] | None  # per device; None for a tuple-shaped one
    operands: tuple[str, ...]
    op_name: str  # metadata op_name; "" where it has none
    line: int | None  # the user's line of its stack frame
    computation: str
    root: bool = False
    calls: str = ""  # the computation a fusion calls
    parameter: int | None = None  # k of ``parameter(k)``


class LocalModule:
    """The instructions of one partitioned HLO module text, by name."""

    def __init__(self, text: str) -> None:
        frames = FrameTable(text)
        self.instructions: dict[str, LocalInstruction] = {}
        self._roots: dict[str, str] = {}
        self._callers: dict[str, str] = {}
        computation = ""
        for line in text.splitlines():
            comp = COMPUTATION.match(line)
            if comp and "=" not in line.split("(", 1)[0]:
                computation = comp["name"]
                continue
            found = _read(line, computation, frames)
            if found is None:
                continue
            self.instructions[found.name] = found
            if found.root:
                self._roots[computation] = found.name
            if found.calls:
                self._callers[found.calls] = found.name

    def by_op_name(self) -> dict[tuple[str, int | None], list[LocalInstruction]]:
        """Array-shaped instructions by (op_name, line), in the module's order."""
        out: dict[tuple[str, int | None], list[LocalInstruction]] = {}
        for i in self.instructions.values():
            if i.op_name and i.shape is not None:
                out.setdefault((i.op_name, i.line), []).append(i)
        return out

    def producers(self, name: str, depth: int = 8) -> Iterator[LocalInstruction]:
        """The instructions that produced ``name``, nearest first (breadth first, at most
        ``depth`` steps): a fusion's root for the fusion, a fused parameter's operand of
        the calling fusion, a get-tuple-element's tuple."""
        seen = {name}
        level = [name]
        for _ in range(depth):
            nxt: list[str] = []
            for n in level:
                i = self.instructions.get(n)
                if i is None:
                    continue
                yield i
                for m in self._inputs(i):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            if not nxt:
                return
            level = nxt

    def _inputs(self, i: LocalInstruction) -> list[str]:
        if i.calls and i.calls in self._roots:
            return [self._roots[i.calls]]
        if i.parameter is not None:
            caller = self.instructions.get(self._callers.get(i.computation, ""))
            if caller is not None and i.parameter < len(caller.operands):
                return [caller.operands[i.parameter]]
            return []
        return list(i.operands)


def _read(line: str, computation: str, frames: FrameTable) -> LocalInstruction | None:
    head = HEAD.match(line)
    if not head:
        return None
    rest = line[head.end() :]
    shape: tuple[int, ...] | None = None
    array = _ARRAY.match(rest)
    if array:
        shape = tuple(int(d) for d in array["dims"].split(",") if d)
        rest = rest[array.end() :]
        rest = rest[rest.index(" ") + 1 :] if " " in rest else ""
    elif rest.startswith("("):
        depth = 0
        for k, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                rest = rest[k + 1 :].lstrip()
                break
    else:
        return None
    opcode = _OPCODE.match(rest)
    if not opcode:
        return None
    args, _, tail = rest[opcode.end() :].partition(")")
    name = OP_NAME.search(tail)
    frame = FRAME.search(tail)
    source = frames.user_source(int(frame[1])) if frame else None
    calls = _CALLS.search(tail) if opcode["opcode"] == "fusion" else None
    parameter = _PARAMETER.match(rest)
    return LocalInstruction(
        name=head["name"],
        opcode=opcode["opcode"],
        shape=shape,
        operands=tuple(_OPERAND.findall(args)),
        op_name=name[1] if name else "",
        line=source.line if source is not None else None,
        computation=computation,
        root=bool(head["root"]),
        calls=calls["name"] if calls else "",
        parameter=int(parameter["index"]) if parameter else None,
    )
