"""Device groups of a compiled collective, from the forms XLA writes them in.

Checked on this machine (jax 0.10.2, XLA's CPU compiler) in ``compiled.as_text()``:

- explicit lists: ``replica_groups={{0,1},{2,3},{4,5},{6,7}}``;
- iota lists: ``replica_groups=[2,4]<=[8]``, or with a transpose
  ``[2,4]<=[4,2]T(1,0)``: ``iota(8).reshape(4, 2).transpose(1, 0).reshape(2, 4)``;
- mesh-axis lists: ``replica_groups=mesh['axis_0'=4,'axis_1'=1,'axis_2'=2] {'axis_0'}``,
  optionally with ``device_ids=([4,2]T(1,0))`` before the braces: the devices (iota by
  default) laid out on the mesh, one group per position of the other axes;
- ``source_target_pairs={{0,2},{2,4}}`` on a collective-permute: one pair per group.

The numbers are positions in the executable's device assignment (with
``use_global_device_ids``, the global ids ``replica * partitions + partition`` of one
replica), not device ids: ``to_device_ids`` maps them through the assignment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_IOTA = re.compile(r"^\[([0-9,]*)\]<=\[([0-9,]*)\](?:T\(([0-9,]*)\))?$")
_BARE_IOTA = re.compile(r"^\[([0-9,]*)\](?:T\(([0-9,]*)\))?$")
_MESH = re.compile(
    r"^mesh\[(?P<axes>[^\]]*)\](?:,?\s*device_ids=\((?P<ids>[^)]*(?:\)[^)]*)?)\))?\s*"
    r"\{(?P<over>[^}]*)\}$"
)
_MESH_AXIS = re.compile(r"'([^']+)'\s*=\s*(\d+)")
# The most device positions the groups of one collective may list, all groups together: far
# above any mesh shardscope lays out (4,096 devices), far below what exhausts memory; a
# text that expands to more is unreadable (``GroupsError``), not expanded.
MAX_POSITIONS = 1 << 20


class GroupsError(ValueError):
    """A device-group text in a form this reader does not know."""


def parse_groups(text: str, num_devices: int | None = None) -> list[list[int]]:
    """Device groups (positions) of a ``replica_groups`` or ``source_target_pairs`` value.

    ``{}`` (no groups) is every device in one group: it needs ``num_devices``.
    """
    text = text.strip()
    if text.startswith("{"):
        return _explicit(text, num_devices)
    if text.startswith("mesh["):
        return _mesh_form(text)
    m = _IOTA.match(text)
    if m:
        return _iota(_ints(m[1]), _ints(m[2]), _ints(m[3]) if m[3] is not None else None).tolist()
    raise GroupsError(f"unknown device-group form {text[:80]!r}")


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split(",") if t.strip()]


def _count(sizes: Sequence[int]) -> int:
    """How many positions a grid of ``sizes`` holds; GroupsError over ``MAX_POSITIONS``
    (counted in Python integers: numpy's would overflow)."""
    count = 1
    for n in sizes:
        count *= n
        if count > MAX_POSITIONS:
            raise GroupsError(f"device groups of over {MAX_POSITIONS} positions")
    return count


def _iota(shape: Sequence[int], reshape: Sequence[int], perm: Sequence[int] | None) -> np.ndarray:
    _count(shape)
    try:
        ids = np.arange(_count(reshape)).reshape(reshape)
        if perm is not None:
            ids = ids.transpose(perm)
        return ids.reshape(shape)
    except ValueError as exc:  # shapes that do not match, a permutation that is none
        raise GroupsError(f"malformed iota device groups ({exc})") from None


def _explicit(text: str, num_devices: int | None) -> list[list[int]]:
    inner = text[1:-1].strip()
    if not inner:
        if num_devices is None:
            raise GroupsError("empty replica groups (all devices) need the device count")
        return [list(range(_count([num_devices])))]
    if inner.count(",") >= MAX_POSITIONS:
        raise GroupsError(f"device groups of over {MAX_POSITIONS} positions")
    groups = re.findall(r"\{([^{}]*)\}", inner)
    return [_ints(g) for g in groups]


def _device_ids(text: str, size: int) -> np.ndarray:
    text = text.strip()
    if not text:
        return np.arange(size)
    m = _IOTA.match(text)
    if m:
        perm = _ints(m[3]) if m[3] is not None else None
        return _iota([size], _ints(m[2]), perm)
    m = _BARE_IOTA.match(text)
    if m:
        perm = _ints(m[2]) if m[2] is not None else None
        return _iota([size], _ints(m[1]), perm)
    ids = _ints(text.replace("{", "").replace("}", ""))
    if len(ids) != size:
        raise GroupsError(f"device_ids {text[:80]!r} do not cover the {size} mesh positions")
    return np.asarray(ids)


def _mesh_form(text: str) -> list[list[int]]:
    m = _MESH.match(text)
    if m is None:
        raise GroupsError(f"unknown mesh device-group form {text[:80]!r}")
    axes = [(name, int(size)) for name, size in _MESH_AXIS.findall(m["axes"])]
    names = [a for a, _ in axes]
    over = [a.strip().strip("'") for a in m["over"].split(",") if a.strip()]
    unknown = [a for a in over if a not in names]
    if unknown:
        raise GroupsError(f"mesh device groups over unknown axes {unknown} in {text[:80]!r}")
    size = _count([s for _, s in axes])
    try:
        grid = _device_ids(m["ids"] or "", size).reshape([s for _, s in axes])
    except ValueError as exc:
        raise GroupsError(f"malformed mesh device groups ({exc})") from None
    rest = [i for i, a in enumerate(names) if a not in over]
    moved = grid.transpose(rest + [names.index(a) for a in over])
    per_group = int(np.prod([grid.shape[names.index(a)] for a in over], dtype=np.int64))
    return moved.reshape(-1, per_group).tolist()


def to_device_ids(groups: list[list[int]], assignment: Sequence[int]) -> list[list[int]]:
    """``groups`` of positions as device ids: position ``i`` is device ``assignment[i]``;
    GroupsError for a position the assignment lacks."""
    try:
        return [[int(assignment[p]) for p in g] for g in groups]
    except IndexError:
        raise GroupsError(
            f"device groups name positions past the {len(assignment)} assigned"
        ) from None
