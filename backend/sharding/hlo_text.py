"""GSPMD's HloSharding text: write it for a mesh and spec, parse it, read a spec back.

HloSharding text comes in two flavours. The *logical* form numbers devices by their
position in the mesh, which is what JAX's ``NamedSharding._to_xla_hlo_sharding`` and
compiled modules print (the device assignment maps positions to devices); it is always
the V2 iota form. The *physical* form numbers devices by id: the same as the logical
form for an iota device order, else XLA's explicit device list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shardscope.backend.errors import MeshError, SpecError
from shardscope.backend.sharding.mesh import AxisType, Mesh
from shardscope.backend.sharding.spec import DimSpec, Spec, validate_spec
from shardscope.backend.sharding.tiles import shard_indices

# HloSharding


def _tile_layout(mesh: Mesh, spec: Spec, ndim: int) -> tuple[list[int], list[int], list[str]]:
    """Tile dims, mesh-axis permutation and subgroup kinds, following JAX's conversion.

    Size-1 axes are dropped; untouched manual axes form a ``manual`` subgroup dim that
    XLA orders before the ``replicated`` one.
    """
    spec = spec.padded(ndim)
    sizes = mesh.axis_sizes
    dims = [1] * ndim
    perm: list[int] = []
    for d, dim in enumerate(spec.dims):
        for a in dim.axes:
            i = mesh.axis_index(a)
            if sizes[i] > 1:
                dims[d] *= sizes[i]
                perm.append(i)
    rest = [i for i in range(len(sizes)) if sizes[i] > 1 and i not in perm]
    manual = [i for i in rest if mesh.axis_types[i] is AxisType.MANUAL]
    repl = [i for i in rest if mesh.axis_types[i] is not AxisType.MANUAL]
    groups = []
    if manual:
        dims.append(math.prod(sizes[i] for i in manual))
        groups.append("manual")
    if repl:
        dims.append(math.prod(sizes[i] for i in repl))
        groups.append("replicated")
    return dims, perm + manual + repl, groups


def _canonical_iota(sizes: Sequence[int], perm: Sequence[int]) -> tuple[list[int], list[int]]:
    """XLA's canonical iota reshape dims and transpose: size-1 dims gone, runs merged."""
    big = [i for i in range(len(sizes)) if sizes[i] > 1]
    sizes = [sizes[i] for i in big]
    keep = [big.index(p) for p in perm if p in big]
    groups: list[list[int]] = []
    for p in keep:
        if groups and groups[-1][-1] + 1 == p:
            groups[-1].append(p)
        else:
            groups.append([p])
    by_first = sorted(range(len(groups)), key=lambda g: groups[g][0])
    reshape = [math.prod(sizes[p] for p in groups[g]) for g in by_first]
    rank_of = {g: r for r, g in enumerate(by_first)}
    return reshape, [rank_of[g] for g in range(len(groups))]


def _suffix(groups: list[str]) -> str:
    if groups == ["replicated"]:
        return " last_tile_dim_replicate"
    if groups:
        return " last_tile_dims={" + ", ".join(groups) + "}"
    return ""


def hlo_sharding_text(
    mesh: Mesh, spec: Spec, ndim: int | None = None, *, physical: bool = False
) -> str:
    """GSPMD HloSharding text for ``spec`` over ``mesh`` on a rank-``ndim`` tensor.

    With ``physical=False`` this equals ``str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(ndim))``
    (devices numbered by mesh position). With ``physical=True`` devices are numbered by
    id, in the explicit list form when the device order is not iota.
    """
    ndim = len(spec.dims) if ndim is None else ndim
    validate_spec(spec, mesh)
    spec = spec.padded(ndim)
    dims, perm, groups = _tile_layout(mesh, spec, ndim)
    if math.prod(dims[:ndim]) == 1:
        if not groups or groups == ["replicated"]:
            return "{replicated}"
        if groups == ["manual"]:
            return "{manual}"
    dims_text = ",".join(str(d) for d in dims)
    if physical and not mesh.is_iota:
        sizes = mesh.axis_sizes
        full_perm = perm + [i for i in range(len(sizes)) if i not in perm]
        ids = mesh.device_grid().transpose(full_perm).reshape(dims)
        if groups and groups[-1] == "replicated":
            # XLA sorts the devices inside each replica group when it builds a partial
            # tile from an explicit list; match its printout.
            ids = np.sort(ids, axis=-1)
        ids = ids.reshape(-1)
        return (
            "{devices=["
            + dims_text
            + "]"
            + ",".join(str(int(i)) for i in ids)
            + _suffix(groups)
            + "}"
        )
    reshape, tperm = _canonical_iota(mesh.axis_sizes, perm)
    iota = "<=[" + ",".join(str(r) for r in reshape) + "]"
    if tperm != sorted(tperm):
        iota += "T(" + ",".join(str(p) for p in tperm) + ")"
    return "{devices=[" + dims_text + "]" + iota + _suffix(groups) + "}"


def maximal_text(device: int) -> str:
    """HloSharding text placing a whole tensor on one device."""
    return f"{{maximal device={int(device)}}}"


@dataclass(frozen=True)
class HloSharding:
    """A parsed HloSharding: ``kind`` is replicated, maximal, manual or tiled.

    For tiled shardings ``assignment`` holds the device numbers shaped like the tile
    dims (trailing subgroup dims included) and ``groups`` names the subgroup dims.
    """

    kind: str
    assignment: np.ndarray | None = None
    groups: tuple[str, ...] = ()
    device: int | None = None

    @property
    def ndim(self) -> int | None:
        """Tensor rank implied by a tiled sharding (None otherwise)."""
        if self.assignment is None:
            return None
        return self.assignment.ndim - len(self.groups)


_HLO_RE = re.compile(
    r"^\{\s*devices=\[(?P<dims>[\d,\s]+)\]\s*"
    r"(?:<=\[(?P<reshape>[\d,\s]+)\](?:\s*T\((?P<perm>[\d,\s]+)\))?|(?P<list>[\d,\s]+?))"
    r"(?P<suffix>\s+last_tile_dim_replicate|\s+last_tile_dims=\{(?P<groups>[^}]*)\})?\s*\}$"
)


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.replace(" ", "").split(",") if t]


def parse_hlo_sharding(text: str) -> HloSharding:
    """Parse HloSharding text: ``{replicated}``, ``{manual}``, ``{maximal device=N}`` or tiled.

    Tiled text may use the iota (``<=[4,2]T(1,0)``) or the explicit device list form.
    """
    t = " ".join(str(text).split())
    if t in ("{replicated}", "{manual}"):
        return HloSharding(t[1:-1])
    m = re.match(r"^\{\s*maximal\s+device=(\d+)\s*\}$", t)
    if m:
        return HloSharding("maximal", device=int(m[1]))
    m = _HLO_RE.match(t)
    if not m:
        raise SpecError(
            f"cannot read HloSharding {text!r}: give {{replicated}}, {{maximal device=N}} or "
            f"{{devices=[...]...}} (tuple shardings are not supported)"
        )
    dims = _ints(m["dims"])
    total = math.prod(dims)
    if m["reshape"] is not None:
        reshape = _ints(m["reshape"])
        perm = _ints(m["perm"]) if m["perm"] else list(range(len(reshape)))
        if math.prod(reshape) != total or sorted(perm) != list(range(len(reshape))):
            raise SpecError(
                f"HloSharding {text!r} has an iota of {math.prod(reshape)} devices for "
                f"{total} tiles: make the reshape dims multiply to the tile count"
            )
        ids = np.arange(total).reshape(reshape).transpose(perm).reshape(dims)
    else:
        flat = _ints(m["list"])
        if len(flat) != total:
            raise SpecError(
                f"HloSharding {text!r} lists {len(flat)} devices for {total} tiles: list one device per tile"
            )
        ids = np.asarray(flat, dtype=np.int64).reshape(dims)
    if m["groups"] is not None:
        groups = tuple(g.strip() for g in m["groups"].split(",") if g.strip())
    else:
        groups = ("replicated",) if m["suffix"] else ()
    return HloSharding("tiled", ids, groups)


def spec_from_hlo_sharding(
    text: str, mesh: Mesh, ndim: int | None = None, *, physical: bool = False
) -> Spec:
    """Recover the closed Spec whose HloSharding over ``mesh`` is ``text``.

    Device numbers are mesh positions (``physical=False``) or device ids. Raises
    SpecError when no spec over this mesh produces that device layout.
    """
    hs = parse_hlo_sharding(text)
    if hs.kind in ("replicated", "manual"):
        return Spec((DimSpec(),) * (ndim or 0))
    if hs.kind == "maximal":
        if mesh.size == 1:
            return Spec((DimSpec(),) * (ndim or 0))
        raise SpecError(
            f"{text} puts the whole tensor on one device, which no spec over a "
            f"{mesh.size}-device mesh expresses: use a 1-device mesh"
        )
    arr = hs.assignment
    assert arr is not None
    rank = hs.ndim or 0
    if ndim is not None and ndim != rank:
        raise SpecError(
            f"{text} is for a rank-{rank} tensor, not rank {ndim}: pass the sharding of this tensor"
        )
    if arr.size != mesh.size:
        raise MeshError(
            f"{text} spans {arr.size} devices but mesh {mesh.describe()} has {mesh.size}: "
            f"use the mesh the sharding was made for"
        )
    pos = _mesh_positions(text, arr.reshape(-1), mesh, physical).reshape(arr.shape)
    tile_idx = np.indices(arr.shape).reshape(arr.ndim, -1).T[:, :rank]
    actual = np.empty_like(tile_idx)
    actual[pos.reshape(-1)] = tile_idx
    dims = _dims_from_strides(actual, mesh, rank)
    spec = Spec(tuple(dims))
    expected = shard_indices(mesh, spec, rank)
    tiles_ok = all(
        math.prod(mesh.shape[a] for a in dim.axes) == arr.shape[d] for d, dim in enumerate(dims)
    )
    if not tiles_ok or not np.array_equal(expected, actual):
        raise SpecError(
            f"{text} is not a named sharding over mesh {mesh.describe()} with device order "
            f"{'iota' if mesh.is_iota else 'given'}: use the mesh (and device order) it was made for"
        )
    return spec


def _mesh_positions(text: str, flat: np.ndarray, mesh: Mesh, physical: bool) -> np.ndarray:
    """The devices a sharding lists, as mesh positions; each must appear once."""
    if physical:
        pos_of = np.empty(mesh.size, dtype=np.int64)
        pos_of[np.asarray(mesh.device_order)] = np.arange(mesh.size)
        if flat.min() < 0 or flat.max() >= mesh.size:
            raise MeshError(
                f"{text} names devices outside 0..{mesh.size - 1}: use this mesh's device ids"
            )
        flat = pos_of[flat]
    if sorted(flat.tolist()) != list(range(mesh.size)):
        raise SpecError(f"{text} does not list each device once: fix the device list")
    return flat


def _dims_from_strides(actual: np.ndarray, mesh: Mesh, rank: int) -> list[DimSpec]:
    """The axes splitting each dim, given the tile index ``actual`` of each mesh position.

    Stepping one along mesh axis i moves the tile index of dim d by a stride; the axes
    with non-zero strides split that dim, the largest stride being the major."""
    sizes = mesh.axis_sizes
    unit = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    dims: list[DimSpec] = []
    for d in range(rank):
        stride = {
            i: int(actual[unit[i], d] - actual[0, d]) for i in range(len(sizes)) if sizes[i] > 1
        }
        axes = tuple(
            mesh.axis_names[i] for i in sorted(stride, key=lambda i: -stride[i]) if stride[i]
        )
        dims.append(DimSpec(axes))
    return dims
