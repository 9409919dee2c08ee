"""A value's sharding as the compiler reports it: axes per dimension, open or closed.

Axis names are strings; a sub-axis is written ``"name:(pre)size"`` as in Shardy's text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Axes per dimension, major first: (("data",), (), ("model", "x:(2)2")).
AxesPerDim = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ValueSharding:
    """One value's sharding: axes per dimension (major first) and which dims are closed."""

    dims: AxesPerDim
    closed: tuple[bool, ...] = ()
    replicated: tuple[str, ...] = ()
    unreduced: tuple[str, ...] = ()

    @property
    def axes(self) -> set[str]:
        """Every axis (or sub-axis) used by a dimension."""
        return {a for d in self.dims for a in d}

    def spec(self) -> list[list[str]]:
        """JSON form: one list of axis names per dimension, ``[]`` when replicated."""
        return [list(d) for d in self.dims]

    def with_dims(self, dims: AxesPerDim) -> ValueSharding:
        """The same sharding with other axes per dimension."""
        return ValueSharding(dims, self.closed, self.replicated, self.unreduced)


def replicated(rank: int) -> ValueSharding:
    """A fully replicated, fully open sharding of a tensor of ``rank`` dims."""
    return ValueSharding(tuple(() for _ in range(rank)), tuple(False for _ in range(rank)))


def split_axis(axis: str) -> tuple[str, int, int] | None:
    """``"x:(2)4"`` -> ``("x", 2, 4)``; a full axis gives None."""
    if ":(" not in axis:
        return None
    name, rest = axis.split(":(", 1)
    pre, size = rest.split(")", 1)
    return name, int(pre), int(size)


def axis_size(axis: str, mesh: Mapping[str, int]) -> int:
    """How many devices ``axis`` spans: a sub-axis its own size, a full axis its mesh size
    (1 for an axis not in ``mesh``)."""
    sub = split_axis(axis)
    return sub[2] if sub else mesh.get(axis, 1)


def _merge(dim: Sequence[str]) -> tuple[str, ...]:
    """Merge adjacent sub-axes of one axis that together form a larger (or the full) axis."""
    out: list[str] = []
    for a in dim:
        s = split_axis(a)
        prev = split_axis(out[-1]) if out else None
        if s and prev and prev[0] == s[0] and prev[1] * prev[2] == s[1]:
            out[-1] = f"{s[0]}:({prev[1]}){prev[2] * s[2]}"
        else:
            out.append(a)
    return tuple(out)


def merge_full_axes(dim: Sequence[str], mesh: dict[str, int]) -> tuple[str, ...]:
    """``_merge`` plus turning a sub-axis that spans a whole mesh axis into that axis."""
    if not any(":(" in a for a in dim):
        return tuple(dim)
    out = []
    for a in _merge(dim):
        s = split_axis(a)
        out.append(s[0] if s and s[1] == 1 and mesh.get(s[0]) == s[2] else a)
    return tuple(out)
