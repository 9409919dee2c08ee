"""The sharding XLA compiled a program value with, read from the partitioned module.

Propagation writes a sharding on every value, but XLA's SPMD partitioner may compute an
intermediate value otherwise: an RMSNorm's square of an operand sharded on its hidden
dimension computed where the operand lies (each device squares its piece) and the
partial sums of the reduction all-reduced, while propagation wrote the square
unsharded on that dimension (seen on this machine: ``x * x`` of an operand sharded
``[data, _, tensor]`` compiled to a per-device ``f32[4,32,16]`` of the global
``[8,32,64]`` while propagation gave the square ``[data, _, _]``). The per-device shape
of the instruction XLA made for the value's op (``hlo.local_shapes``), set beside the
value's global shape, gives how many pieces each dimension was cut into; the mesh axes
whose sizes make those counts are named, propagation's own axes first where they fit.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from shardscope.backend.hlo.instructions import hlo_opcode
from shardscope.backend.hlo.local_shapes import LocalInstruction, LocalModule

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph

Dims = tuple[tuple[str, ...], ...]


class CompiledShardings:
    """Compiled shardings of a program's values, read lazily from the module text."""

    def __init__(
        self,
        hlo_text: str,
        graph: ProgramGraph,
        mesh: dict[str, int],
        find: Callable[[str, int | None], int | None],
    ) -> None:
        self._text = hlo_text
        self._graph = graph
        self._mesh = dict(mesh)
        self._find = find
        self._module: LocalModule | None = None
        self._by_op: dict[tuple[str, int | None], list[LocalInstruction]] | None = None
        self._memo: dict[tuple[int, tuple[str, ...]], Dims | None] = {}

    @property
    def module(self) -> LocalModule:
        if self._module is None:
            self._module = LocalModule(self._text)
        return self._module

    def of_value(self, value: int, prefer: Dims = (), hint: Sequence[str] = ()) -> Dims | None:
        """Axes per dimension of ``value`` as XLA computed it (``prefer``: propagation's
        axes, kept where they make the piece counts; ``hint``: axes to try next), None
        where no instruction of its op tells (an argument, a shape that does not fit)."""
        key = (value, tuple(hint))
        if key not in self._memo:
            self._memo[key] = self._of_value(value, prefer, hint)
        return self._memo[key]

    def _of_value(self, value: int, prefer: Dims, hint: Sequence[str]) -> Dims | None:
        v = self._graph.values[value]
        if v.producer is None or v.shape is None or not self._text:
            return None
        shape = tuple(v.shape)
        local = self._local_shape(v.producer, shape)
        if local is None:
            return None
        return assign_axes(shape, local, self._mesh, prefer, hint)

    def _local_shape(self, op_id: int, shape: tuple[int, ...]) -> tuple[int, ...] | None:
        op = self._graph.ops[op_id]
        fits = [
            i.shape
            for i in self._instructions(op_id)
            if i.shape is not None
            and len(i.shape) == len(shape)
            and all(0 < a <= b for a, b in zip(i.shape, shape, strict=True))
        ]
        own = [
            i.shape
            for i in self._instructions(op_id)
            if i.opcode == hlo_opcode(op.name) and i.shape in fits
        ]
        chosen = own or (fits if len(set(fits)) == 1 else [])
        if not chosen:
            return None
        return Counter(chosen).most_common(1)[0][0]

    def _instructions(self, op_id: int) -> list[LocalInstruction]:
        if self._by_op is None:
            self._by_op = {}
            for (name, line), found in self.module.by_op_name().items():
                hit = self._find(name, line)
                if hit is None:
                    continue
                o = self._graph.ops[hit]
                self._by_op.setdefault((o.location_name or "", o.source_line), []).extend(found)
        op = self._graph.ops[op_id]
        return self._by_op.get((op.location_name or "", op.source_line), [])

    def producer_ops(self, instruction: str, depth: int = 8) -> list[int]:
        """The program ops of the instructions that produced ``instruction``, nearest
        first, each once."""
        out: list[int] = []
        for i in self.module.producers(instruction, depth):
            if not i.op_name:
                continue
            found = self._find(i.op_name, i.line)
            if found is not None and found not in out:
                out.append(found)
        return out


def piece_counts(shape: Sequence[int], local: Sequence[int]) -> list[list[int]]:
    """For each dimension, the piece counts that cut ``shape`` to ``local`` (a count
    ``n`` gives pieces of ``ceil(size / n)``: the last ones padded), smallest first."""
    out = []
    for size, piece in zip(shape, local, strict=True):
        if piece >= size:
            out.append([1])
            continue
        first = math.ceil(size / piece)
        counts = [n for n in range(first, size + 1) if math.ceil(size / n) == piece]
        out.append(counts or [first])
    return out


def assign_axes(
    shape: Sequence[int],
    local: Sequence[int],
    mesh: dict[str, int],
    prefer: Dims = (),
    hint: Sequence[str] = (),
) -> Dims | None:
    """Mesh axes per dimension whose sizes multiply to the piece count that cuts
    ``shape`` to ``local``, each axis used once: ``prefer``'s axes of a dimension where
    they make its count, else the combination sharing most with ``prefer`` then with
    ``hint``, fewest axes first, in mesh order. None where no combination does."""
    counts = piece_counts(shape, local)
    names = list(mesh)
    out: list[tuple[str, ...] | None] = [None] * len(counts)
    used: set[str] = set()
    for i, options in enumerate(counts):
        own = tuple(prefer[i]) if i < len(prefer) else ()
        if options == [1]:
            out[i] = ()
        elif own and math.prod(mesh.get(a, 0) for a in own) in options and not used & set(own):
            out[i] = own
            used.update(own)
    for i, options in enumerate(counts):
        if out[i] is not None:
            continue
        own = set(prefer[i]) if i < len(prefer) else set()
        best: tuple[tuple[int, int, int, int], tuple[str, ...]] | None = None
        for r in range(1, len(names) + 1):
            for combo in itertools.combinations(names, r):
                if used & set(combo) or math.prod(mesh[a] for a in combo) not in options:
                    continue
                score = (-len(own & set(combo)), -len(set(hint) & set(combo)), r, 0)
                if best is None or score < best[0]:
                    best = (score, combo)
        if best is None:
            return None
        out[i] = best[1]
        used.update(best[1])
    return tuple(d or () for d in out)
