"""How a session's mesh lies over hosts: the host count and, where chosen, the DCN factors.

A ``HostLayout`` is the session's part of ``sharding.hosts``: ``count`` hosts own the
mesh's devices in blocks of device numbers (``Hosts``), and ``dcn``, where set, is the
number of hosts along each axis, as ``run --dcn`` takes it. With ``dcn`` set the mesh is
in that hybrid device order (``sharding.hosts.hybrid_order``, the layout
``create_hybrid_device_mesh`` gives) and ``count`` is the product of the factors, as
``apply_hosts`` makes them; ``check`` says so of a layout read back from a file.

The edits of the layout are pure functions of the mesh and the layout, each returning the
new mesh and layout (``with_count``, ``with_factor``), or, for a new mesh the user drew,
the layout that still fits it (``fit_mesh``); ``backend.session.edits`` makes them
undoable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from shardscope.backend.errors import MeshError
from shardscope.backend.sharding.hosts import (
    Hosts,
    axis_spans,
    dcn_factors,
    format_dcn,
    hybrid_mesh,
    hybrid_order,
)
from shardscope.backend.sharding.mesh import Mesh

# The most hosts a session lays a mesh over (``run --hosts`` takes as many).
MAX_HOSTS = 64


@dataclass(frozen=True)
class HostLayout:
    """``count`` hosts; ``dcn`` the hosts along each axis, in the mesh's axis order, where
    the mesh is in that hybrid order (None: hosts own blocks of the device order)."""

    count: int = 1
    dcn: tuple[tuple[str, int], ...] | None = None

    @property
    def factors(self) -> dict[str, int] | None:
        """The DCN factor of each axis, or None."""
        return dict(self.dcn) if self.dcn is not None else None

    @property
    def dcn_text(self) -> str:
        """``data=2`` (the ``--dcn`` syntax); empty without DCN factors."""
        return format_dcn(dict(self.dcn)) if self.dcn is not None else ""

    @property
    def multi(self) -> bool:
        """Whether there is more than one host."""
        return self.count > 1

    def hosts(self, mesh: Mesh) -> Hosts:
        """The ``Hosts`` of ``mesh`` under this layout (MeshError where they do not fit)."""
        return Hosts(self.count, mesh.size)

    def describe(self) -> str:
        """``2 hosts of 4 devices, DCN data=2``; ``1 host``."""
        if self.count == 1:
            return "1 host"
        return f"{self.count} hosts" + (f", DCN {self.dcn_text}" if self.dcn_text else "")

    def to_json(self) -> dict:
        """``{"count": 2, "dcn": {"data": 2, "model": 1}}`` (no ``dcn`` where unset)."""
        out: dict = {"count": self.count}
        if self.dcn is not None:
            out["dcn"] = dict(self.dcn)
        return out

    @classmethod
    def from_json(cls, data: object) -> HostLayout:
        """Read ``to_json``'s form; MeshError naming the problem otherwise."""
        if not isinstance(data, Mapping):
            raise MeshError("the hosts entry is not an object: save the session again")
        count = data.get("count", 1)
        if type(count) is not int or not 1 <= count <= MAX_HOSTS:
            raise MeshError(
                f"the host count {count!r} is not a whole number from 1 to {MAX_HOSTS}: "
                "save the session again"
            )
        dcn = data.get("dcn")
        if dcn is None:
            return cls(count)
        if not isinstance(dcn, Mapping) or not all(
            isinstance(k, str) and type(v) is int and v >= 1 for k, v in dcn.items()
        ):
            raise MeshError(
                "the DCN factors are not axis names with whole numbers of hosts: "
                "save the session again"
            )
        return cls(count, tuple(dcn.items()))

    def check(self, mesh: Mesh) -> None:
        """MeshError naming the fix unless this layout fits ``mesh``: the count splits its
        devices, and DCN factors name its axes in order, divide their sizes, multiply to
        the count and give the mesh's device order."""
        check_count(self.count, mesh)
        if self.dcn is None:
            return
        factors = dict(self.dcn)
        if tuple(factors) != mesh.axis_names:
            raise MeshError(
                f"the DCN factors name axes {', '.join(factors)} but the mesh has "
                f"{', '.join(mesh.axis_names)}: save the session again"
            )
        for name, f in factors.items():
            check_factor(mesh, name, f)
        if math.prod(factors.values()) != self.count:
            raise MeshError(
                f"the DCN factors {self.dcn_text or 'of 1'} lay the mesh over "
                f"{math.prod(factors.values())} hosts, not {self.count}: save the session again"
            )
        if hybrid_order(mesh, factors) != mesh.device_order:
            raise MeshError(
                f"the mesh's device order is not the DCN layout {self.dcn_text}: "
                "save the session again"
            )


def check_count(count: int, mesh: Mesh) -> Hosts:
    """The ``Hosts`` of ``count`` hosts over ``mesh``; MeshError naming the fix where the
    count is out of range or does not split the devices evenly."""
    if type(count) is not int or not 1 <= count <= MAX_HOSTS:
        raise MeshError(f"{count!r} hosts: give a host count from 1 to {MAX_HOSTS}")
    return Hosts(count, mesh.size)


def check_factor(mesh: Mesh, axis: str, factor: int) -> None:
    """MeshError naming the fix unless ``factor`` hosts can lie along ``axis``."""
    if axis not in mesh.shape:
        raise MeshError(
            f"the mesh {mesh.describe()} has no axis {axis!r}: use one of "
            f"{', '.join(mesh.axis_names)}"
        )
    size = mesh.shape[axis]
    if type(factor) is not int or factor < 1 or size % factor:
        raise MeshError(
            f"{factor} hosts along {axis}: axis {axis} has {size} devices; give a number of "
            f"hosts that divides {size}"
        )


def shown_factors(mesh: Mesh, layout: HostLayout) -> dict[str, int] | None:
    """The hosts along each axis: the layout's DCN factors, else those of the hybrid order
    the mesh's device order is (``dcn_factors``); None where it is none."""
    if layout.dcn is not None:
        return dict(layout.dcn)
    try:
        return dcn_factors(mesh, layout.hosts(mesh))
    except MeshError:
        return None


def spans(mesh: Mesh, layout: HostLayout) -> dict[str, str]:
    """How each axis lies (``axis_spans``: ``ici``, ``dcn``, ``both``)."""
    try:
        return axis_spans(mesh, layout.hosts(mesh))
    except MeshError:
        return {name: "ici" for name in mesh.axis_names}


def _laid_out(mesh: Mesh, factors: Mapping[str, int]) -> tuple[Mesh, HostLayout]:
    """``mesh`` in the hybrid order of ``factors`` and its layout (one host: no factors)."""
    ordered, hosts = hybrid_mesh(mesh, factors)
    if hosts.count == 1:
        return ordered, HostLayout()
    return ordered, HostLayout(hosts.count, tuple((n, int(factors[n])) for n in mesh.axis_names))


def refit(mesh: Mesh, factors: Mapping[str, int], count: int) -> dict[str, int] | None:
    """DCN factors for ``count`` hosts that keep the hosts where ``factors`` lays them:
    each axis keeps as much of its factor as ``count`` allows, then the axes with a
    factor, then the others (major first), take the hosts left as far as their sizes
    allow; None where they cannot hold them all."""
    first = [n for n in mesh.axis_names if factors.get(n, 1) > 1]
    order = first + [n for n in mesh.axis_names if n not in first]
    left = count
    out = {name: 1 for name in mesh.axis_names}
    for name in first:
        f = math.gcd(int(factors[name]), left)
        out[name] = f
        left //= f
    for name in order:
        f = math.gcd(mesh.shape[name] // out[name], left)
        out[name] *= f
        left //= f
    return out if left == 1 else None


def with_count(mesh: Mesh, layout: HostLayout, count: int) -> tuple[Mesh, HostLayout]:
    """``count`` hosts. Without DCN factors the mesh keeps its order and the hosts own
    blocks of it; with them, the hosts stay along the same axes where they fit
    (``refit``), else the factors are dropped. MeshError naming the fix for a count out of
    range or one that does not split the devices evenly."""
    check_count(count, mesh)
    if layout.dcn is None:
        return mesh, HostLayout(count)
    factors = refit(mesh, dict(layout.dcn), count)
    if factors is None:
        return mesh, HostLayout(count)
    return _laid_out(mesh, factors)


def with_factor(mesh: Mesh, layout: HostLayout, axis: str, factor: int) -> tuple[Mesh, HostLayout]:
    """``factor`` hosts along ``axis``, the other axes keeping theirs (``shown_factors``;
    none for a custom order): the mesh takes that hybrid order and the host count is the
    product, as ``run --dcn`` makes it. MeshError naming the fix otherwise."""
    check_factor(mesh, axis, factor)
    factors = shown_factors(mesh, layout) or {name: 1 for name in mesh.axis_names}
    factors = {**factors, axis: int(factor)}
    product = math.prod(factors.values())
    if product > MAX_HOSTS:
        raise MeshError(
            f"{format_dcn(factors)} lays the mesh over {product} hosts, more than "
            f"{MAX_HOSTS}: give fewer hosts along another axis"
        )
    return _laid_out(mesh, factors)


def fit_mesh(old: Mesh | None, layout: HostLayout, new: Mesh) -> tuple[Mesh, HostLayout, str]:
    """The mesh and layout after the user drew ``new`` in place of ``old``, and what was
    lost (empty: nothing). DCN factors follow their axes: by position where the axis
    sizes stay (a rename), by name otherwise, the mesh taking their hybrid order unless
    the device order itself was edited; else the count stays where it splits the new
    mesh, and falls back to one host where it does not."""
    if layout.count == 1:
        return new, layout, ""
    if layout.dcn is not None and old is not None:
        factors = _follow(old, dict(layout.dcn), new)
        if factors is not None and math.prod(factors.values()) == layout.count:
            same = old.axis_sizes == new.axis_sizes
            edited = same and new.device_order != old.device_order
            if not edited:
                return _laid_out(new, factors) + ("",)
    if new.size % layout.count == 0:
        return new, HostLayout(layout.count), ""
    return (
        new,
        HostLayout(),
        f"the mesh's {new.size} devices do not split evenly among {layout.count} hosts, so "
        f"it is back to 1 host",
    )


def _follow(old: Mesh, factors: dict[str, int], new: Mesh) -> dict[str, int] | None:
    """``factors`` moved to ``new``'s axes (see ``fit_mesh``), or None where they do not fit."""
    if old.axis_sizes == new.axis_sizes:
        return {n: factors[o] for o, n in zip(old.axis_names, new.axis_names, strict=True)}
    out = {name: 1 for name in new.axis_names}
    for name, f in factors.items():
        if f == 1:
            continue
        if name not in new.shape or new.shape[name] % f:
            return None
        out[name] = f
    return out
