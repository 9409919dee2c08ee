"""The device groups of a collective: which devices talk to each other over some mesh axes.

A collective over axes ``A`` runs once per group of devices that agree on their position
along every other (sub-)axis of the mesh and differ only along ``A``. Axes may be
sub-axes written ``"name:(pre)size"`` as in Shardy's text: an axis of size ``n`` splits
into a major part of ``pre`` devices, the sub-axis of ``size``, and a minor rest of
``n / (pre * size)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.values import split_axis


def device_groups(mesh: Mesh, axes: Sequence[str]) -> list[tuple[int, ...]]:
    """Device ids in each group of a collective over ``axes``, groups ordered by their
    first device's mesh position, members in mesh order along ``axes`` (major first).

    ShardscopeError for an axis the mesh lacks or a sub-axis that does not divide it.
    """
    names = mesh.axis_names
    sizes = dict(mesh.shape)
    # Each mesh axis becomes (pre, size, rest) pieces; the collective's pieces are marked.
    cuts: dict[str, list[tuple[int, int]]] = {}
    for axis in axes:
        sub = split_axis(axis)
        name, pre, size = sub if sub else (axis, 1, sizes.get(axis, 0))
        if name not in sizes:
            raise ShardscopeError(
                f"collective axis {axis!r} is not in the mesh: use one of {', '.join(names)}"
            )
        n = sizes[name]
        if size < 1 or pre < 1 or n % (pre * size):
            raise ShardscopeError(
                f"sub-axis {axis!r} does not divide mesh axis {name!r} of size {n}"
            )
        cuts.setdefault(name, []).append((pre, size))
    shape: list[int] = []
    chosen: list[int] = []  # reshaped-array dims the collective runs over, in axes order
    order: dict[tuple[str, int], int] = {}
    for name in names:
        n = sizes[name]
        pieces = sorted(cuts.get(name, []))
        at = 1
        for pre, size in pieces:
            if pre < at:
                raise ShardscopeError(f"sub-axes of {name!r} overlap: {pieces}")
            if pre > at:
                shape.append(pre // at)
            order[(name, pre)] = len(shape)
            shape.append(size)
            at = pre * size
        if at < n:
            shape.append(n // at)
    for axis in axes:
        sub = split_axis(axis)
        name, pre = (sub[0], sub[1]) if sub else (axis, 1)
        chosen.append(order[(name, pre)])
    grid = mesh.device_grid().reshape(shape)
    others = [d for d in range(len(shape)) if d not in chosen]
    moved = np.transpose(grid, others + chosen)
    group = int(np.prod([shape[d] for d in chosen], dtype=np.int64)) if chosen else 1
    rows = moved.reshape(-1, group)
    positions = {dev: i for i, dev in enumerate(mesh.device_order)}
    groups = [tuple(int(d) for d in row) for row in rows]
    groups.sort(key=lambda g: min(positions[d] for d in g))
    return groups


def spanned_axes(mesh: Mesh, groups: Sequence[Sequence[int]] | None) -> tuple[str, ...]:
    """The mesh axes along which the devices of some group (a permute's pair) differ, in
    mesh order: for groups that span no whole axis, the axes they span part of."""
    position = {d: i for i, d in enumerate(mesh.device_order or range(mesh.size))}
    sizes = list(mesh.shape.values())
    moved: set[int] = set()
    for group in groups or ():
        coords = [unravel(position[d], sizes) for d in group if d in position]
        for a, b in itertools.pairwise(coords):
            moved.update(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    return tuple(mesh.axis_names[i] for i in sorted(moved))


def unravel(index: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """The mesh coordinates of row-major position ``index`` on axes of ``sizes``."""
    out = []
    for size in reversed(sizes):
        out.append(index % size)
        index //= size
    return tuple(reversed(out))
