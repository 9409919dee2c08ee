"""The propagation timeline: ordered steps and the sharding of every value at any step.

Shardy only ever grows a sharding: an axis, once on a dimension, stays there, and new axes
are appended (minor side). So the state of a value at step ``k`` is its final sharding
restricted to the axes it had at the start plus those that reached it at a step ``<= k``.
Each value keeps the sorted list of the steps that changed it; a query is one bisect per
value, independent of how many steps precede ``k``.

Axis names are strings; a sub-axis is written ``"name:(pre)size"`` as in Shardy's text.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from shardscope.backend.json_form import JsonForm
from shardscope.backend.sharding.values import (
    AxesPerDim,
    ValueSharding,
    merge_full_axes,
    split_axis,
)


def _restrict(final_dim: Sequence[str], have: set[str]) -> tuple[str, ...]:
    """The prefix-preserving part of ``final_dim`` made of axes in ``have``.

    A final full axis may have arrived as sub-axes that Shardy merged later, so the pieces
    held so far stand in for it, in order.
    """
    out: list[str] = []
    for axis in final_dim:
        if axis in have:
            out.append(axis)
            continue
        pieces = sorted(
            (s[1], a) for a in have if (s := split_axis(a)) is not None and s[0] == axis
        )
        out.extend(a for _, a in pieces)
        if not pieces:
            break
    return tuple(out)


@dataclass(frozen=True)
class Step(JsonForm):
    """One propagation step: an axis moved from ``source`` to ``targets`` across ``op``.

    ``source`` and ``targets`` use Shardy's words (``operand-i`` / ``result-j``) relative to
    the op; ``values`` are the graph value ids of the targets, ``source_value`` that of the
    source (None when the program graph has no such value). Its JSON form is a
    ``steps[]`` entry of ``propagate --json``.
    """

    index: int
    op: int | None
    op_name: str
    axis: str
    source: str
    targets: tuple[str, ...]
    values: tuple[int, ...]
    source_value: int | None = None
    recorded: bool = True


@dataclass
class Timeline:
    """Ordered steps plus, per value, the initial and final sharding and its change list.

    ``initial`` is what the annotations (user and code) gave each value before
    propagation; ``final`` is the sharding after propagation. ``origins[v][axis]`` names
    the annotation an axis came from (``sdy.sharding_origins``).
    """

    steps: list[Step]
    initial: dict[int, ValueSharding]
    final: dict[int, ValueSharding]
    origins: dict[int, dict[str, str]] = field(default_factory=dict)
    mesh: dict[str, int] = field(default_factory=dict)
    _changes: dict[int, tuple[list[int], list[str]]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.steps.sort(key=lambda s: s.index)
        changes: dict[int, tuple[list[int], list[str]]] = {}
        for step in self.steps:
            for v in step.values:
                start = self.initial.get(v)
                if start is not None and step.axis in start.axes:
                    continue
                idx, axes = changes.setdefault(v, ([], []))
                if step.axis in axes:
                    continue
                idx.append(step.index)
                axes.append(step.axis)
        self._changes = changes

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last_index(self) -> int:
        """Index of the last step (-1 without steps)."""
        return self.steps[-1].index if self.steps else -1

    def changes(self, value: int) -> list[tuple[int, str]]:
        """``(step index, axis)`` for every axis that reached ``value``, in step order."""
        idx, axes = self._changes.get(value, ([], []))
        return list(zip(idx, axes, strict=True))

    def value_at(self, value: int, k: int) -> ValueSharding | None:
        """The sharding of ``value`` after step ``k`` (``k = -1``: before any step)."""
        final = self.final.get(value)
        if final is None:
            return None
        start = self.initial.get(value)
        have = set(start.axes) if start is not None else set()
        idx, axes = self._changes.get(value, ([], []))
        have.update(axes[: bisect.bisect_right(idx, k)])
        return final.with_dims(tuple(_restrict(d, have) for d in final.dims))

    def state_at(self, k: int, values: Iterable[int] | None = None) -> dict[int, ValueSharding]:
        """The sharding of each value (all by default) after step ``k``."""
        keys = self.final.keys() if values is None else values
        out = {}
        for v in keys:
            s = self.value_at(v, k)
            if s is not None:
                out[v] = s
        return out

    def replay(self) -> dict[int, AxesPerDim]:
        """Apply every step to the initial state, one axis at a time, and return the end state.

        Independent of ``value_at``: each added axis is appended to the dimension that holds
        it in the final sharding, which is how Shardy grows shardings. Used to check that
        the steps explain the final state exactly.
        """
        state: dict[int, list[list[str]]] = {}
        where: dict[int, dict[str, int]] = {}
        for v, fin in self.final.items():
            start = self.initial.get(v)
            state[v] = [list(d) for d in start.dims] if start else [[] for _ in fin.dims]
            where[v] = {}
            for i, d in enumerate(fin.dims):
                for a in d:
                    where[v][a] = i
        for step in self.steps:
            for v in step.values:
                if v not in state:
                    continue
                present = {a for d in state[v] for a in d}
                if step.axis in present:
                    continue
                dim = where[v].get(step.axis)
                if dim is None:
                    sub = split_axis(step.axis)
                    dim = where[v].get(sub[0]) if sub else None
                if dim is None:
                    continue
                state[v][dim].append(step.axis)
        return {v: tuple(merge_full_axes(d, self.mesh) for d in dims) for v, dims in state.items()}

    def unexplained(self) -> dict[int, tuple[AxesPerDim, AxesPerDim]]:
        """Values whose replayed end state differs from the final one: ``{v: (replayed, final)}``."""
        got = self.replay()
        out = {}
        for v, fin in self.final.items():
            if got.get(v) != fin.dims:
                out[v] = (got.get(v, ()), fin.dims)
        return out


def complete(timeline: Timeline, describe: Callable[[int], tuple[str, int | None]]) -> Timeline:
    """``timeline`` plus a step for every axis the recorded steps do not explain.

    Shardy does not record every addition (the final pass that copies returned values'
    shardings onto the function results runs outside its debug hook). Each missing axis
    becomes one step after the last recorded one, marked ``recorded=False``, so that
    replaying the steps always ends in the final state. ``describe(v)`` gives the op name
    and source value to show for value ``v``.
    """
    missing = {}
    last = timeline.last_index
    initial, changes = timeline.initial, timeline._changes
    for v, fin in timeline.final.items():
        # A value that holds every final axis by the last step is explained; that is most
        # of them, and checking it is cheaper than rebuilding the sharding.
        start = initial.get(v)
        added = changes.get(v)
        if all(
            (start is not None and a in start.axes) or (added is not None and a in added[1])
            for d in fin.dims
            for a in d
        ):
            continue
        got = timeline.value_at(v, last)
        if got is not None and got.dims != fin.dims:
            missing[v] = (got.dims, fin.dims)
    if not missing:
        return timeline
    steps = list(timeline.steps)
    nxt = timeline.last_index + 1
    for v in sorted(missing):
        held = {a for d in missing[v][0] for a in d}
        op_name, src = describe(v)
        for dim in timeline.final[v].dims:
            for axis in dim:
                if axis in held:
                    continue
                steps.append(
                    Step(nxt, None, op_name, axis, "operand-0", ("result-0",), (v,), src, False)
                )
                nxt += 1
    return Timeline(steps, timeline.initial, timeline.final, timeline.origins, timeline.mesh)
