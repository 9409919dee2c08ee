"""Playback of a propagation timeline: where the user is among its steps, as a state machine.

``Playback`` holds a position among the timeline's distinct step indices (several
``Step`` rows share an index when one op moved several axes at once), whether it is
playing, at what speed, and a filter that narrows which steps it stops at. It knows no
clock: a timer calls ``tick(seconds)`` and the machine advances as many steps as the speed
allows. Each change is announced to the callbacks registered with ``listen`` as one
``PlaybackEvent``; a view draws ``state()`` (the sharding of every value after the
current step, a query on the timeline, never a replay).

Off (``position is None``) means "not stepping": views show the final state. Reaching the
last step stops playing and stays there; its state is the final one.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.timeline import Step, Timeline
    from shardscope.backend.sharding.values import ValueSharding

# Steps per second: the speeds the window offers, and the default.
SPEEDS = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 240.0)
DEFAULT_SPEED = 10.0


@dataclass(frozen=True)
class StepFilter:
    """Which steps playback stops at: all conditions given must hold (None: any).

    ``axis`` a mesh axis (a sub-axis of it matches too); ``value`` a graph value id that
    the step targets or comes from; ``scope`` a name-scope prefix of the step's op
    (``block/attn`` matches ``block/attn/dot``).
    """

    axis: str | None = None
    value: int | None = None
    scope: str | None = None

    @property
    def empty(self) -> bool:
        return self.axis is None and self.value is None and self.scope is None

    def describe(self) -> str:
        parts = []
        if self.axis is not None:
            parts.append(f"axis {self.axis}")
        if self.value is not None:
            parts.append(f"tensor {self.value}")
        if self.scope is not None:
            parts.append(f"scope {self.scope}")
        return ", ".join(parts) or "all steps"


@dataclass(frozen=True)
class StepGroup:
    """A run of consecutive positions that share a key (an op's scope, or an axis).

    ``start`` and ``end`` are positions (inclusive) in the playback's position list.
    """

    key: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class PlaybackEvent:
    """What changed: ``kind`` is ``position``, ``playing``, ``speed``, ``filter`` or
    ``finished`` (playing reached the last step); the fields give the state after it."""

    kind: str
    position: int | None
    step: int | None
    playing: bool
    changed: frozenset[int] = field(default_factory=frozenset)


def _axis_matches(step_axis: str, axis: str) -> bool:
    return step_axis == axis or step_axis.startswith(axis + ":(")


class Playback:
    """See the module docstring. ``graph`` (optional) gives ops their scopes for the scope
    filter and the op grouping."""

    def __init__(
        self,
        timeline: Timeline,
        graph: ProgramGraph | None = None,
        *,
        start: int | None = None,
    ) -> None:
        self.timeline = timeline
        self.graph = graph
        self._listeners: list[Callable[[PlaybackEvent], None]] = []
        self._by_index: dict[int, list[Step]] = {}
        for step in timeline.steps:
            self._by_index.setdefault(step.index, []).append(step)
        self.all_indices: list[int] = sorted(self._by_index)
        self.filter = StepFilter()
        self.indices: list[int] = list(self.all_indices)
        self.position: int | None = None
        self.playing = False
        self.speed = DEFAULT_SPEED
        self._credit = 0.0
        if start is not None:
            self.seek_step(start, quiet=True)

    # -- listeners ----------------------------------------------------------------------
    def listen(self, callback: Callable[[PlaybackEvent], None]) -> None:
        """Call ``callback(event)`` after every change."""
        self._listeners.append(callback)

    def unlisten(self, callback: Callable[[PlaybackEvent], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _emit(self, kind: str, changed: Iterable[int] = ()) -> None:
        event = PlaybackEvent(
            kind, self.position, self.step_index, self.playing, frozenset(changed)
        )
        for callback in list(self._listeners):
            callback(event)

    # -- where we are ---------------------------------------------------------------------
    def __len__(self) -> int:
        """How many positions the (filtered) playback has."""
        return len(self.indices)

    @property
    def active(self) -> bool:
        """Whether a step is shown (else views show the final state)."""
        return self.position is not None

    @property
    def step_index(self) -> int | None:
        """The timeline step index at the position (None when off)."""
        return None if self.position is None else self.indices[self.position]

    @property
    def at_end(self) -> bool:
        return self.position is not None and self.position == len(self.indices) - 1

    def steps(self, index: int | None = None) -> list[Step]:
        """The timeline rows of step ``index`` (default: the current one)."""
        index = self.step_index if index is None else index
        return list(self._by_index.get(index, ())) if index is not None else []

    def state(self, values: Iterable[int] | None = None) -> dict[int, ValueSharding]:
        """The sharding of ``values`` (all by default) at the position, final when off."""
        k = self.timeline.last_index if self.step_index is None else self.step_index
        return self.timeline.state_at(k, values)

    def value_at(self, value: int) -> ValueSharding | None:
        """One value's sharding at the position (final when off)."""
        k = self.timeline.last_index if self.step_index is None else self.step_index
        return self.timeline.value_at(value, k)

    def changed_between(self, a: int | None, b: int | None) -> set[int]:
        """Values whose sharding differs between step indices ``a`` and ``b`` (None: final)."""
        last = self.timeline.last_index
        lo, hi = (last if a is None else a), (last if b is None else b)
        if lo > hi:
            lo, hi = hi, lo
        out: set[int] = set()
        i = bisect.bisect_right(self.all_indices, lo)
        j = bisect.bisect_right(self.all_indices, hi)
        for index in self.all_indices[i:j]:
            for step in self._by_index[index]:
                out.update(step.values)
        return out

    # -- moving ---------------------------------------------------------------------------
    def _move(self, position: int | None, *, quiet: bool = False) -> bool:
        if position is not None:
            if not self.indices:
                position = None
            else:
                position = max(0, min(len(self.indices) - 1, position))
        if position == self.position:
            return False
        before = self.step_index
        self.position = position
        if not quiet:
            self._emit("position", self.changed_between(before, self.step_index))
        return True

    def seek(self, position: int | None, *, quiet: bool = False) -> bool:
        """Go to ``position`` (clamped; None leaves step mode); True if it moved."""
        return self._move(position, quiet=quiet)

    def seek_step(self, index: int, *, quiet: bool = False) -> bool:
        """Go to the first position at or after timeline step ``index`` (the last if none)."""
        if not self.indices:
            return False
        pos = bisect.bisect_left(self.indices, index)
        return self._move(min(pos, len(self.indices) - 1), quiet=quiet)

    def advance(self, count: int = 1) -> bool:
        """Forward ``count`` positions (from off: to the first); True if it moved."""
        if self.position is None:
            return self._move(count - 1)
        return self._move(self.position + count)

    def back(self, count: int = 1) -> bool:
        """Back ``count`` positions (from off: from the last)."""
        if self.position is None:
            return self._move(len(self.indices) - count)
        return self._move(self.position - count)

    def home(self) -> bool:
        return self._move(0)

    def end(self) -> bool:
        """To the last step; playing stops there (as when it plays up to it)."""
        moved = self._move(len(self.indices) - 1)
        if self.playing and self.at_end:
            self.playing = False
            self._emit("finished")
        return moved

    def reset(self) -> None:
        """Stop playing and leave step mode (views show the final state)."""
        self.pause()
        self._move(None)

    # -- playing --------------------------------------------------------------------------
    def play(self) -> None:
        """Start playing; from the end (or off) it starts again at the first step."""
        if self.playing or not self.indices:
            return
        if self.position is None or self.at_end:
            self._move(0)
        self.playing = True
        self._credit = 0.0
        self._emit("playing")

    def pause(self) -> None:
        if self.playing:
            self.playing = False
            self._emit("playing")

    def toggle(self) -> None:
        """Play or pause."""
        if self.playing:
            self.pause()
        else:
            self.play()

    def set_speed(self, steps_per_second: float) -> None:
        if not (steps_per_second > 0 and math.isfinite(steps_per_second)):
            raise ValueError(f"speed {steps_per_second!r}: give a number of steps per second > 0")
        if steps_per_second != self.speed:
            self.speed = float(steps_per_second)
            self._emit("speed")

    def tick(self, seconds: float) -> int:
        """``seconds`` of playing went by: advance by speed x seconds (whole steps, the
        remainder kept for the next tick); stop at the end. Returns the steps advanced."""
        if not self.playing:
            return 0
        self._credit += max(0.0, seconds) * self.speed
        count = int(self._credit)
        if count <= 0:
            return 0
        self._credit -= count
        start = self.position or 0
        self._move(start + count)
        moved = (self.position or 0) - start
        if self.at_end:
            self.playing = False
            self._emit("finished")
        return moved

    # -- filters --------------------------------------------------------------------------
    def _matches(self, step: Step, f: StepFilter) -> bool:
        if f.axis is not None and not _axis_matches(step.axis, f.axis):
            return False
        if f.value is not None and f.value not in step.values and step.source_value != f.value:
            return False
        if f.scope is not None:
            scope = self.scope_of(step)
            if not (scope == f.scope or scope.startswith(f.scope + "/")):
                return False
        return True

    def scope_of(self, step: Step) -> str:
        """The name scope of the step's op ("" without a graph or an op)."""
        if self.graph is None or step.op is None:
            return ""
        return self.graph.ops[step.op].scope or ""

    def set_filter(self, f: StepFilter) -> int:
        """Stop only at steps matching ``f``; keeps the current step if it matches, else
        moves to the next one that does. Returns how many positions match."""
        current = self.step_index
        self.filter = f
        if f.empty:
            self.indices = list(self.all_indices)
        else:
            self.indices = [
                i for i in self.all_indices if any(self._matches(s, f) for s in self._by_index[i])
            ]
        self.position = None
        if current is not None and self.indices:
            pos = bisect.bisect_left(self.indices, current)
            self.position = min(pos, len(self.indices) - 1)
        if not self.indices:
            self.playing = False
        self._emit("filter", self.changed_between(current, self.step_index))
        return len(self.indices)

    # -- grouping for the scrubber ----------------------------------------------------------
    def group_key(self, index: int, by: str) -> str:
        """The key step ``index`` is grouped under: ``by="axis"`` its axis (the axes of
        all its rows, joined), ``by="op"`` the top-level scope of its op (else the op)."""
        rows = self._by_index[index]
        if by == "axis":
            return "+".join(sorted({r.axis.split(":(")[0] for r in rows}))
        if by != "op":
            raise ValueError(f"group by {by!r}: use 'op' or 'axis'")
        row = rows[0]
        scope = self.scope_of(row)
        if scope:
            return scope.split("/")[0]
        return row.op_name

    def groups(self, by: str = "op") -> list[StepGroup]:
        """Runs of consecutive positions with one ``group_key``."""
        out: list[StepGroup] = []
        start, key = 0, None
        for pos, index in enumerate(self.indices):
            k = self.group_key(index, by)
            if key is None:
                key = k
            elif k != key:
                out.append(StepGroup(key, start, pos - 1))
                start, key = pos, k
        if key is not None:
            out.append(StepGroup(key, start, len(self.indices) - 1))
        return out
