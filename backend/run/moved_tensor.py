"""How a compiled collective moves a tensor of a program op, read off the op's shardings.

``MoveFinder.derive(kind, op, axes, dimensions, dims)`` finds, for a collective of
``kind`` over mesh ``axes`` serving ``op``, the tensor of the op it moves and the sharding
it had and needs (``Found``), where ``dims(value)`` gives a value's axes per dimension
(propagation's, or the ones XLA compiled: ``run.compiled_shardings``):

- an all-gather: a tensor whose dimension holds the gathered axes loses them there; on an
  op that moves elements along a dimension (a slice, concatenate, pad) that is a
  ``shift``;
- an all-reduce or reduce-scatter: an operand dimension holding the axes the results do
  not (partial results: ``contract`` for a matmul, ``reduce`` for a reduction), else a
  ``select`` (the op takes a part of a sharded dimension some devices hold);
- an all-to-all: the axes move from an operand's dimension to another of the result's;
- a collective-permute: a ``shift`` along a dimension the op moves elements on, else a
  move between dimensions (``permute``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Op, ProgramGraph
    from shardscope.backend.propagation.conflicts import Conflict

Dims = tuple[tuple[str, ...], ...]

# Program ops that move elements along a dimension: on a sharded one, pieces cross devices.
MOVING_OPS = {
    "stablehlo.slice",
    "stablehlo.concatenate",
    "stablehlo.pad",
    "stablehlo.reverse",
    "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice",
    "stablehlo.reduce_window",
    "stablehlo.convolution",
}
CONTRACTING_OPS = {"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"}
REDUCING_OPS = {"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter"}


def without(dims: Dims, axes: set[str], only: int | None = None) -> Dims:
    return tuple(
        tuple(a for a in d if a not in axes) if only is None or i == only else d
        for i, d in enumerate(dims)
    )


@dataclass(frozen=True)
class Found:
    """The tensor a collective moves and its two shardings."""

    value: int
    had: Dims
    needed: Dims
    dim: int | None  # the dimension that changes (None: several or not known)
    how: str  # gather, contract, reduce, sum, move, permute, predicted


class MoveFinder:
    """The ways a collective moves a tensor of an op of ``graph`` (``conflicts``: the
    propagation's, which name the factor an operand's axes were proposed for)."""

    def __init__(self, graph: ProgramGraph, conflicts: Sequence[Conflict]) -> None:
        self.graph = graph
        self.conflicts = conflicts

    def derive(
        self, kind: str, op: Op, axes: set[str], dimensions: list[int], dims: Callable
    ) -> Found | None:
        if not axes:
            return None
        if kind == "all-gather":
            found = self._gathered(op, axes, dimensions, dims)
            if found is not None and op.name in MOVING_OPS:
                return replace(found, how="shift")
            return found
        if kind in ("all-reduce", "reduce-scatter"):
            return self._summed(op, axes, dims)
        if kind in ("all-to-all", "ragged-all-to-all"):
            return self._moved(op, axes, dimensions, dims)
        if kind == "collective-permute":
            return self._shifted(op, axes, dims) or self._permuted(op, axes, dims)
        return None

    def _gathered(
        self, op: Op, axes: set[str], dimensions: list[int], dims: Callable
    ) -> Found | None:
        """The tensor of ``op`` whose dimension (``dimensions=`` where its rank fits)
        holds the gathered axes: it loses them there."""
        for v in (*op.operands, *op.results):
            had = dims(v)
            dim = dimensions[0] if dimensions and dimensions[0] < len(had) else None
            if dim is not None and axes <= set(had[dim]):
                return Found(v, had, without(had, axes, dim), dim, "gather")
        for v in (*op.operands, *op.results):
            had = dims(v)
            for i, d in enumerate(had):
                if axes <= set(d):
                    return Found(v, had, without(had, axes, i), i, "gather")
        return None

    def _summed(self, op: Op, axes: set[str], dims: Callable) -> Found | None:
        """An operand of ``op`` whose dimension holds the reduced axes: each device summed
        its part (partial sums). That dimension is one whose axes none of the op's
        results holds; else the one a conflict of the op names for a factor those axes
        were proposed for (the results took them on another factor); else one that two
        operands hold them on (a contracting factor is in both operands of a matmul).
        An op that sums nothing (a slice, a gather, a reshape) takes a part of a sharded
        dimension that only some devices hold: ``select``."""
        how = (
            "contract"
            if op.name in CONTRACTING_OPS
            else "reduce"
            if op.name in REDUCING_OPS
            else "select"
        )
        kept = {a for r in op.results for d in dims(r) for a in d}
        holding = [(v, i) for v in op.operands for i, d in enumerate(dims(v)) if axes & set(d)]
        if not axes & kept and holding:
            v, i = holding[0]
        else:
            found = self._conflicted_dim(op, axes, dims) or (
                holding[0] if len({v for v, _ in holding}) > 1 else None
            )
            if found is None:
                return None
            v, i = found
        had = dims(v)
        return Found(v, had, without(had, axes, i), i, how)

    def _conflicted_dim(self, op: Op, axes: set[str], dims: Callable) -> tuple[int, int] | None:
        """An operand and dimension a conflict on ``op`` names for a factor proposed
        with ``axes``."""
        for c in self.conflicts:
            if c.op != op.id:
                continue
            for p in c.proposals:
                kind, _, number = p.tensor.partition("-")
                if kind != "operand" or not number.isdigit() or not axes & set(p.axes):
                    continue
                index = int(number)
                named = c.dims.get(p.tensor, [])
                if index < len(op.operands) and named:
                    v = op.operands[index]
                    if named[0] < len(dims(v)) and axes & set(dims(v)[named[0]]):
                        return v, named[0]
        return None

    def _moved(self, op: Op, axes: set[str], dimensions: list[int], dims: Callable) -> Found | None:
        """An operand that holds the axes on one dimension and a result that holds them
        on another: they move there."""
        for v in op.operands:
            had = dims(v)
            src = next((i for i, d in enumerate(had) if axes & set(d)), None)
            if src is None:
                continue
            dst = None
            for r in op.results:
                got = dims(r)
                dst = next((i for i, d in enumerate(got) if axes & set(d) and i != src), None)
                if dst is not None and dst < len(had):
                    break
                dst = None
            if dst is None and dimensions and dimensions[0] != src and dimensions[0] < len(had):
                dst = dimensions[0]
            if dst is None:
                continue
            needed = list(without(had, axes, src))
            needed[dst] = needed[dst] + tuple(a for a in had[src] if a in axes)
            return Found(v, had, tuple(needed), src, "move")
        return None

    def _permuted(self, op: Op, axes: set[str], dims: Callable) -> Found | None:
        """An operand that holds the axes where the op's result holds them on another
        dimension."""
        found = self._moved(op, axes, [], dims)
        return replace(found, how="permute") if found is not None else None

    def _shifted(self, op: Op, axes: set[str], dims: Callable) -> Found | None:
        """For an op that moves elements along a dimension (a slice, a concatenate, a
        pad...): a tensor of it sharded over the axes on a dimension whose size the op
        changes (else on any dimension): its pieces cross devices there."""
        if op.name not in MOVING_OPS:
            return None
        shapes = [self.graph.values[v].shape for v in (*op.operands, *op.results)]
        changed = {
            i
            for i in range(min((len(x) for x in shapes if x is not None), default=0))
            if len({x[i] for x in shapes if x is not None}) > 1
        }
        found = None
        for v in (*op.operands, *op.results):
            had = dims(v)
            for i, d in enumerate(had):
                if axes & set(d) and (i in changed or found is None):
                    found = Found(v, had, had, i, "shift")
                    if i in changed:
                        return found
        return found
