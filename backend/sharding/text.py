"""Sharding text forms (GSPMD HloSharding, Shardy attributes) and sharding kinds.

HloSharding text comes in two flavours. The *logical* form numbers devices by their
position in the mesh, which is what JAX's ``NamedSharding._to_xla_hlo_sharding`` and
compiled modules print (the device assignment maps positions to devices); it is always
the V2 iota form. The *physical* form numbers devices by id: the same as the logical
form for an iota device order, else XLA's explicit device list.

Shardy text is handled for the single attribute (``#sdy.sharding<...>``) and the mesh
op; whole modules are parsed elsewhere with the MLIR bindings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from shardscope.backend.errors import MeshError, SpecError
from shardscope.backend.sharding.mesh import AxisType, Mesh, MeshAxis
from shardscope.backend.sharding.spec import DimSpec, Spec, validate_spec
from shardscope.backend.sharding.tiles import shard_indices

# ---------------------------------------------------------------------------------------
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
    flat = arr.reshape(-1)
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
    pos = flat.reshape(arr.shape)
    sizes = mesh.axis_sizes
    tile_idx = np.indices(arr.shape).reshape(arr.ndim, -1).T[:, :rank]
    actual = np.empty_like(tile_idx)
    actual[pos.reshape(-1)] = tile_idx
    # Stepping one along mesh axis i moves the tile index of dim d by a stride; the
    # axes with non-zero strides split that dim, the largest stride being the major.
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


# ---------------------------------------------------------------------------------------
# Kinds


@dataclass(frozen=True)
class ShardingKind:
    """The kind of a sharding, by HLO meaning and by PyTorch/XLA's spec-based rule.

    ``hlo``: replicated, partially replicated, tiled, manual or maximal.
    ``torch_xla``: replicated, partial, tiled or maximal (PyTorch/XLA's ShardingType).
    """

    hlo: str
    torch_xla: str

    @property
    def differs(self) -> bool:
        """The two classifications name different kinds."""
        return _NORMAL.get(self.hlo, self.hlo) != self.torch_xla


_NORMAL = {"partially replicated": "partial"}


def sharding_kind(mesh: Mesh, spec: Spec, ndim: int | None = None) -> ShardingKind:
    """Classify ``spec`` over ``mesh`` both ways.

    PyTorch/XLA: one device -> maximal; all entries None -> replicated; some None ->
    partial; else tiled. HLO: counts distinct tiles (size-1 axes split nothing), so
    e.g. (None, "model") on data=1,model=8 is tiled by HLO but partial by PyTorch/XLA.
    """
    ndim = len(spec.dims) if ndim is None else ndim
    validate_spec(spec, mesh)
    return ShardingKind(
        hlo_kind(hlo_sharding_text(mesh, spec, ndim)), _torch_kind(mesh, spec.padded(ndim))
    )


def _torch_kind(mesh: Mesh, spec: Spec) -> str:
    if mesh.size == 1:
        return "maximal"
    if all(d.is_replicated for d in spec.dims):
        return "replicated"
    if any(d.is_replicated for d in spec.dims):
        return "partial"
    return "tiled"


def hlo_kind(text: str) -> str:
    """The kind of HloSharding text: replicated, partially replicated, tiled, manual, maximal."""
    hs = parse_hlo_sharding(text)
    if hs.kind != "tiled":
        return hs.kind
    if "replicated" in hs.groups:
        return "partially replicated"
    if hs.groups == ("manual",):
        return "manual"
    return "tiled"


# ---------------------------------------------------------------------------------------
# Shardy


def _dim_sdy(dim: DimSpec) -> str:
    parts = [f'"{a}"' for a in dim.axes] + (["?"] if dim.is_open else [])
    text = "{" + ", ".join(parts) + "}"
    return text if dim.priority is None else f"{text}p{dim.priority}"


def sdy_sharding_text(
    mesh: Mesh,
    spec: Spec,
    ndim: int | None = None,
    *,
    mesh_name: str = "mesh",
    inline: bool = False,
) -> str:
    """Shardy attribute text, e.g. ``#sdy.sharding<@mesh, [{"data"}, {"model", ?}p1]>``.

    ``inline=True`` writes the mesh in place (``mesh<["data"=4]>``) instead of ``@mesh_name``.
    """
    ndim = len(spec.dims) if ndim is None else ndim
    validate_spec(spec, mesh)
    spec = spec.padded(ndim)
    ref = "mesh" + mesh.sdy_attr_body() if inline else f"@{mesh_name}"
    text = f"#sdy.sharding<{ref}, [" + ", ".join(_dim_sdy(d) for d in spec.dims) + "]"
    if spec.replicated:
        text += ", replicated={" + ", ".join(f'"{a}"' for a in spec.replicated) + "}"
    return text + ">"


_TOKEN_RE = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<sym>@[A-Za-z0-9_.$-]+)|(?P<int>\d+)'
    r"|(?P<word>[#A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[<>\[\]{}(),=?:]))"
)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN_RE.match(stripped, pos)
            if not m or m.end() == pos:
                self.fail(f"unexpected character {stripped[pos:].strip()[:1]!r}")
            kind = m.lastgroup or ""
            self.items.append((kind, m[kind]))
            pos = m.end()
        self.i = 0

    def fail(self, what: str) -> None:
        raise SpecError(
            f"cannot read Shardy text {self.text.strip()!r}: {what}; write it like "
            f'#sdy.sharding<@mesh, [{{"data"}}, {{}}]>'
        )

    def peek(self) -> str | None:
        return self.items[self.i][1] if self.i < len(self.items) else None

    def take(self, expected: str | None = None, kind: str | None = None) -> str:
        if self.i >= len(self.items):
            self.fail(f"it ends early (expected {expected or kind})")
        k, v = self.items[self.i]
        if (expected is not None and v != expected) or (kind is not None and k != kind):
            self.fail(f"expected {expected or kind} but found {v!r}")
        self.i += 1
        return v

    def accept(self, value: str) -> bool:
        if self.peek() == value:
            self.i += 1
            return True
        return False


def _axis_name(tok: _Tokens) -> str:
    name = tok.take(kind="str")[1:-1]
    if tok.peek() == ":":
        raise SpecError(
            f"sub-axis {name!r}:(...) in {tok.text.strip()!r} is not supported: "
            f"use whole mesh axes (split the axis into two mesh axes instead)"
        )
    return name


def _mesh_body(tok: _Tokens) -> Mesh:
    tok.take("<")
    tok.take("[")
    axes = []
    while not tok.accept("]"):
        name = tok.take(kind="str")[1:-1]
        tok.take("=")
        axes.append(MeshAxis(name, int(tok.take(kind="int"))))
        if not tok.accept(","):
            tok.take("]")
            break
    order: list[int] = []
    if tok.accept(","):
        tok.take("device_ids")
        tok.take("=")
        tok.take("[")
        while not tok.accept("]"):
            order.append(int(tok.take(kind="int")))
            tok.accept(",")
    tok.take(">")
    if not axes:
        raise MeshError("Shardy mesh has no axes (a maximal mesh): give a mesh with named axes")
    return Mesh(tuple(axes), tuple(order))


@dataclass(frozen=True)
class SdySharding:
    """A parsed ``#sdy.sharding``: the mesh it names (or an inline Mesh) and the Spec."""

    mesh_name: str | None
    mesh: Mesh | None
    spec: Spec


def parse_sdy_sharding(text: str) -> SdySharding:
    """Parse a Shardy sharding attribute (``#sdy.sharding<...>`` or the bare ``<@mesh, [...]>``).

    Sub-axes and ``unreduced`` axes are reported as unsupported.
    """
    tok = _Tokens(str(text))
    if tok.peek() in ("#sdy.sharding", "sdy.sharding"):
        tok.take()
    tok.take("<")
    mesh_name: str | None = None
    mesh: Mesh | None = None
    if tok.peek() == "mesh":
        tok.take()
        mesh = _mesh_body(tok)
    else:
        mesh_name = tok.take(kind="sym")[1:]
    tok.take(",")
    tok.take("[")
    dims: list[DimSpec] = []
    while not tok.accept("]"):
        tok.take("{")
        axes: list[str] = []
        is_open = False
        while not tok.accept("}"):
            if tok.accept("?"):
                is_open = True
            else:
                axes.append(_axis_name(tok))
            if not tok.accept(","):
                tok.take("}")
                break
        prio = None
        nxt = tok.peek()
        if nxt is not None and re.fullmatch(r"p\d+", nxt):
            prio = int(tok.take()[1:])
        dims.append(DimSpec(tuple(axes), is_open, prio))
        if not tok.accept(","):
            tok.take("]")
            break
    replicated: list[str] = []
    while tok.accept(","):
        key = tok.take(kind="word")
        if key != "replicated":
            raise SpecError(
                f"{key}= axes in {text.strip()!r} are not supported: drop the {key}= list"
            )
        tok.take("=")
        tok.take("{")
        while not tok.accept("}"):
            replicated.append(_axis_name(tok))
            tok.accept(",")
    tok.take(">")
    if tok.peek() is not None:
        tok.fail(f"unexpected {tok.peek()!r} after the closing >")
    return SdySharding(mesh_name, mesh, Spec(tuple(dims), tuple(replicated)))


def parse_sdy_mesh(text: str) -> tuple[str | None, Mesh]:
    """Parse ``sdy.mesh @name = <[...]>`` or ``#sdy.mesh<[...]>`` into (name, Mesh)."""
    tok = _Tokens(str(text))
    name = None
    first = tok.peek()
    if first == "sdy.mesh":
        tok.take()
        name = tok.take(kind="sym")[1:]
        tok.take("=")
    elif first == "#sdy.mesh":
        tok.take()
    mesh = _mesh_body(tok)
    if tok.peek() is not None:
        tok.fail(f"unexpected {tok.peek()!r} after the mesh")
    return name, mesh
