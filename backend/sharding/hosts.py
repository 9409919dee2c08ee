"""Hosts of a mesh: which host owns which device, which axes cross hosts, what crosses.

A slice of ``H`` hosts holds a mesh's ``N`` devices ``N / H`` to a host. Device numbers
are the mesh's own (``Mesh.device_order``): host ``k`` owns devices ``k·N/H`` to
``(k+1)·N/H - 1``, the way JAX's global device list runs process by process. With the
default (iota) order that is the ``k``-th block of the mesh's flattened devices; another
order moves mesh positions between hosts, which is what a device order changes on a real
slice.

A hybrid mesh says, per axis, how many hosts lie along it (its DCN factor) as
``jax.experimental.mesh_utils.create_hybrid_device_mesh(ici_shape, dcn_shape, devices,
process_is_granule=True)`` does: along an axis of size ``s`` with DCN factor ``f`` the
index is ``dcn_index · (s / f) + ici_index``, the host is the row-major number of the
DCN indices and the device within it the row-major number of the ICI indices.
``hybrid_order`` gives that mesh's device order in the mesh's device numbers.

Traffic of a collective (``group_traffic``) is the bytes its devices send in one run,
split into those that stay within a host and those that cross hosts: a ring
(all-gather, reduce-scatter, all-reduce) runs through a group's devices in the order
the compiler lists them, each device sending its bytes to the next; an all-to-all sends
each other device of the group an equal share; a collective-permute's pairs send from
source to target.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shardscope.backend.errors import MeshError, shortened
from shardscope.backend.sharding.mesh import Mesh

# How an axis lies across hosts (``axis_spans``).
ICI, DCN, BOTH = "ici", "dcn", "both"
_RING_KINDS = ("all-gather", "reduce-scatter", "all-reduce")


@dataclass(frozen=True)
class Hosts:
    """``count`` hosts of ``devices`` devices in all, ``devices / count`` each."""

    count: int
    devices: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise MeshError(f"--hosts {self.count}: give a host count of at least 1")
        if self.devices % self.count:
            raise MeshError(
                f"the mesh's {self.devices} devices do not split evenly among {self.count} "
                f"hosts: give a host count that divides {self.devices}"
            )

    @property
    def per_host(self) -> int:
        """Devices each host owns."""
        return self.devices // self.count

    def of_device(self, device: int) -> int:
        """The host that owns device number ``device``."""
        return int(device) // self.per_host

    def devices_of(self, host: int) -> range:
        """The device numbers host ``host`` owns."""
        return range(host * self.per_host, (host + 1) * self.per_host)

    def grid(self, mesh: Mesh):  # -> np.ndarray
        """The host of each mesh position, an integer array shaped like the mesh."""
        return mesh.device_grid() // self.per_host

    def crosses(self, groups: Iterable[Sequence[int]] | None) -> bool:
        """Whether any device group holds devices of two hosts."""
        return any(len({self.of_device(d) for d in g}) > 1 for g in groups or ())

    def traffic(
        self, kind: str, groups: Iterable[Sequence[int]] | None, bytes_per_device: float
    ) -> tuple[int, int]:
        """Bytes one run of a collective sends (within hosts, across hosts), summed over
        its groups; ``bytes_per_device`` is what each device of a group sends."""
        within = across = 0.0
        for group in groups or ():
            w, a = group_traffic(kind, group, bytes_per_device, self.of_device)
            within += w
            across += a
        return round(within), round(across)


def hosts_for(mesh: Mesh, count: int | None) -> Hosts:
    """The hosts of ``mesh`` split among ``count`` hosts (None: one)."""
    return Hosts(1 if count is None else int(count), mesh.size)


def group_traffic(
    kind: str, group: Sequence[int], bytes_per_device: float, host_of
) -> tuple[float, float]:
    """(within, across) bytes one group of a collective sends, ``host_of`` giving each
    device's host (see the module's note for each kind's pattern)."""
    n = len(group)
    if n <= 1 or bytes_per_device <= 0:
        return 0.0, 0.0
    hosts = [host_of(d) for d in group]
    if kind == "collective-permute":
        # A permute's groups are its (source, target) pairs.
        crossing = sum(1 for a, b in zip(hosts, hosts[1:], strict=False) if a != b)
        pairs = max(1, n - 1)
        total = bytes_per_device * pairs
        return total * (pairs - crossing) / pairs, total * crossing / pairs
    total = bytes_per_device * n
    if kind in _RING_KINDS:
        crossing = sum(1 for i in range(n) if hosts[i] != hosts[(i + 1) % n])
        return total * (n - crossing) / n, total * crossing / n
    # all-to-all and the rest: each device sends each other device an equal share.
    others_away = sum(sum(1 for h in hosts if h != mine) for mine in hosts)
    share = others_away / (n * (n - 1))
    return total * (1 - share), total * share


def axis_spans(mesh: Mesh, hosts: Hosts) -> dict[str, str]:
    """Per axis: ``ici`` when every step along it stays on one host (size-1 axes too),
    ``dcn`` when every step crosses hosts, ``both`` when some steps do and some do not."""
    import numpy as np

    grid = hosts.grid(mesh)
    out = {}
    for i, name in enumerate(mesh.axis_names):
        if grid.shape[i] < 2:
            out[name] = ICI
            continue
        steps = np.diff(grid, axis=i) != 0
        out[name] = DCN if steps.all() else BOTH if steps.any() else ICI
    return out


def dcn_factors(mesh: Mesh, hosts: Hosts) -> dict[str, int] | None:
    """The DCN factor of each axis if ``mesh``'s order is a hybrid mesh's
    (``hybrid_order``) for some factors, else None."""
    for factors in _factorings(mesh.axis_sizes, hosts.count):
        named = dict(zip(mesh.axis_names, factors, strict=True))
        if hybrid_order(mesh, named) == mesh.device_order:
            return named
    return None


def _factorings(sizes: Sequence[int], count: int) -> Iterable[tuple[int, ...]]:
    """Every tuple of divisors of ``sizes`` whose product is ``count``."""
    if not sizes:
        if count == 1:
            yield ()
        return
    first, rest = sizes[0], sizes[1:]
    for f in range(1, first + 1):
        if first % f == 0 and count % f == 0:
            for tail in _factorings(rest, count // f):
                yield (f, *tail)


def parse_dcn(text: str | Mapping[str, int] | None, mesh: Mesh) -> dict[str, int]:
    """``"data=2"`` (or a mapping): the DCN factor of each named axis, 1 for the others.
    MeshError naming the fix for an axis the mesh lacks or a factor that does not divide
    the axis' size."""
    if text is None or text == "":
        return {name: 1 for name in mesh.axis_names}
    if isinstance(text, str):
        given: dict[str, int] = {}
        for item in (p.strip() for p in text.split(",")):
            name, sep, value = item.partition("=")
            name = name.strip()
            if not name:
                raise MeshError(f"--dcn {shortened(text)} has an empty entry: write it like data=2")
            if not sep:
                value = str(mesh.shape.get(name, 1))  # a bare name: the whole axis spans hosts
            if not value.strip().isdigit():
                raise MeshError(
                    f"--dcn {shortened(name + '=' + value)}: give a whole number of hosts, e.g. data=2"
                )
            given[name] = int(value)
    elif isinstance(text, Mapping):
        given = {}
        for name, value in text.items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise MeshError(
                    f"dcn {shortened(name)}: {shortened(value)} is not a whole number of hosts: "
                    f"give e.g. {{'data': 2}}"
                )
            given[str(name)] = value
    else:
        raise MeshError(
            f"dcn {shortened(text)} is neither text nor a mapping of axes: give e.g. "
            f"'data=2' or {{'data': 2}}"
        )
    out = {name: 1 for name in mesh.axis_names}
    for name, factor in given.items():
        if name not in mesh.shape:
            raise MeshError(
                f"--dcn names axis {shortened(name)}, which the mesh {mesh.describe()} lacks: use one of "
                f"{', '.join(mesh.axis_names)}"
            )
        size = mesh.shape[name]
        if factor < 1 or size % factor:
            raise MeshError(
                f"--dcn {name}={factor}: axis {name} has size {size}; give a number of hosts "
                f"that divides it"
            )
        out[name] = factor
    return out


def hybrid_order(mesh: Mesh, dcn: Mapping[str, int]) -> tuple[int, ...]:
    """The device order of ``mesh``'s axes laid out as a hybrid mesh with DCN factor
    ``dcn[axis]`` along each axis (missing axes: 1): the layout
    ``create_hybrid_device_mesh(ici_shape, dcn_shape, devices, process_is_granule=True)``
    gives over devices numbered host by host."""
    import numpy as np

    sizes = mesh.axis_sizes
    dcn_shape = tuple(int(dcn.get(name, 1)) for name in mesh.axis_names)
    ici_shape = tuple(s // f for s, f in zip(sizes, dcn_shape, strict=True))
    per_host = math.prod(ici_shape)
    order = np.empty(sizes, dtype=np.int64)
    for position in np.ndindex(*sizes):
        d_index = tuple(p // i for p, i in zip(position, ici_shape, strict=True))
        i_index = tuple(p % i for p, i in zip(position, ici_shape, strict=True))
        host = int(np.ravel_multi_index(d_index, dcn_shape)) if dcn_shape else 0
        local = int(np.ravel_multi_index(i_index, ici_shape)) if ici_shape else 0
        order[position] = host * per_host + local
    return tuple(int(d) for d in order.flat)


def hybrid_mesh(mesh: Mesh, dcn: Mapping[str, int]) -> tuple[Mesh, Hosts]:
    """``mesh`` in the hybrid device order of ``dcn``, and its hosts (the product of
    the DCN factors)."""
    count = math.prod(int(dcn.get(name, 1)) for name in mesh.axis_names)
    ordered = Mesh(mesh.axes, hybrid_order(mesh, dcn), mesh.axis_types)
    return ordered, Hosts(count, mesh.size)


def ici_only_dcn(mesh: Mesh, hosts: Hosts, axes: Sequence[str]) -> dict[str, int] | None:
    """DCN factors under which a collective over ``axes`` would stay within a host:
    hosts laid along the other axes (major first), or None where they cannot hold all
    ``hosts.count`` hosts."""
    return _along_others(mesh, {name: 1 for name in mesh.axis_names}, hosts.count, axes)


def _along_others(
    mesh: Mesh, out: dict[str, int], left: int, axes: Sequence[str]
) -> dict[str, int] | None:
    """``out`` with the ``left`` hosts laid along the axes other than ``axes``, major
    first, as many on each as divide both; None where they do not all fit."""
    for name in mesh.axis_names:
        if name in axes or left == 1:
            continue
        f = math.gcd(mesh.shape[name], left)
        out[name] = f
        left //= f
    return out if left == 1 else None


def format_dcn(dcn: Mapping[str, int]) -> str:
    """``data=2`` for the axes with a DCN factor above 1 (the ``--dcn`` syntax)."""
    return ",".join(f"{k}={v}" for k, v in dcn.items() if v > 1)


def apply_hosts(
    mesh: Mesh, count: int | None, dcn: str | Mapping[str, int] | None
) -> tuple[Mesh, Hosts]:
    """``mesh`` and its hosts for ``--hosts count`` and ``--dcn dcn``: with ``dcn`` the
    mesh takes the hybrid device order (``hybrid_order``) and the host count is the
    product of the DCN factors (``count``, where given, must equal it); without it the
    mesh keeps its order and ``count`` hosts (None: one) own blocks of device numbers.
    MeshError naming the fix otherwise."""
    if dcn is None or dcn == "" or dcn == {}:
        return mesh, hosts_for(mesh, count)
    factors = parse_dcn(dcn, mesh)
    product = math.prod(factors.values())
    if count is not None and count != product:
        raise MeshError(
            f"--dcn {format_dcn(factors) or dcn} lays the mesh over {product} hosts but "
            f"--hosts is {count}: give DCN factors whose product is {count}, or leave out --hosts"
        )
    return hybrid_mesh(mesh, factors)


def across_dcn(mesh: Mesh, hosts: Hosts, axes: Sequence[str]) -> dict[str, int] | None:
    """DCN factors under which every step along ``axes`` crosses hosts: each of ``axes``
    wholly across hosts, the hosts left laid along the other axes (major first); None
    where ``hosts.count`` does not fit that way."""
    left = hosts.count
    out = {name: 1 for name in mesh.axis_names}
    for name in axes:
        size = mesh.shape[name]
        if left % size:
            return None
        out[name] = size
        left //= size
    return _along_others(mesh, out, left, axes)


def axis_steps(mesh: Mesh, hosts: Hosts, axis: str) -> list[str]:
    """Per step ``i → i+1`` along ``axis``: ``stays`` (on one host at every position),
    ``crosses`` (to another host at every position) or ``mixed``."""
    import numpy as np

    grid = hosts.grid(mesh)
    i = mesh.axis_names.index(axis)
    moved = np.moveaxis(np.diff(grid, axis=i) != 0, i, 0)
    out = []
    for step in moved:
        out.append("crosses" if step.all() else "mixed" if step.any() else "stays")
    return out


def _steps_text(steps: Sequence[str]) -> str:
    """``steps 0→1 and 2→3 stay on a host; step 1→2 crosses hosts``."""
    verbs = {
        "stays": ("stays on a host", "stay on a host"),
        "crosses": ("crosses hosts", "cross hosts"),
        "mixed": ("crosses hosts at some positions", "cross hosts at some positions"),
    }
    parts = []
    for how in ("stays", "crosses", "mixed"):
        at = [f"{i}→{i + 1}" for i, s in enumerate(steps) if s == how]
        if not at:
            continue
        if len(at) > 4:
            names = f"{len(at)} of the {len(steps)} steps ({', '.join(at[:2])} ... {at[-1]})"
        elif len(at) == 1:
            names = f"step {at[0]}"
        else:
            names = f"steps {', '.join(at[:-1])} and {at[-1]}"
        parts.append(f"{names} {verbs[how][len(at) > 1]}")
    return "; ".join(parts)


def mesh_warnings(
    mesh: Mesh, hosts: Hosts, busy: Iterable[Sequence[str]] | None = None
) -> list[str]:
    """One line per axis that spans both ICI and DCN (``axis_spans``): which of its steps
    cross hosts, and the ``--dcn`` that lays it within hosts or wholly across them.
    ``busy``: the axes of each collective the program runs, where known; then an axis no
    collective runs over is not warned about, and a fix says which of them it would make
    cross hosts. Empty for one host."""
    if hosts.count < 2:
        return []
    runs = None if busy is None else list(dict.fromkeys(tuple(a) for a in busy if a))
    spans = axis_spans(mesh, hosts)
    factors = dcn_factors(mesh, hosts)
    out = []
    for name, span in spans.items():
        if span != BOTH or (runs is not None and not any(name in a for a in runs)):
            continue
        size = mesh.shape[name]
        text = (
            f"axis {name} ({size}) spans both ICI and DCN on {hosts.count} hosts: "
            f"{_steps_text(axis_steps(mesh, hosts, name))}"
        )
        if factors is not None:
            f = factors[name]
            text += (
                f" (the layout --dcn {format_dcn(factors)} gives: {f} hosts along {name}, "
                f"{size // f} devices on each)"
            )
        text += f"; a collective over {name} crosses hosts on part of its ring"
        fixes = []
        within = ici_only_dcn(mesh, hosts, [name])
        if within is not None:
            fix = f"--dcn {format_dcn(within)} keeps {name} within each host"
            worse = _newly_crossing(mesh, hosts, within, runs or ())
            if worse:
                fix += f" (then collectives over {', '.join(worse)} cross hosts)"
            fixes.append(fix)
        across = across_dcn(mesh, hosts, [name])
        if across is not None:
            fixes.append(f"--dcn {format_dcn(across)} lays {name} wholly across hosts")
        if fixes:
            text += ": " + ", or ".join(fixes)
        else:
            text += (
                f": no layout of {hosts.count} hosts keeps {name} on one link; split it into "
                f"an ICI axis and a DCN axis"
            )
        out.append(text)
    return out


def _newly_crossing(
    mesh: Mesh, hosts: Hosts, dcn: Mapping[str, int], runs: Iterable[tuple[str, ...]]
) -> list[str]:
    """``model``, ``data+model``: the axes of ``runs`` whose collectives stay within
    hosts on ``mesh`` but would cross them with the mesh laid out as ``dcn``."""
    from shardscope.backend.sharding.device_groups import device_groups

    laid, laid_hosts = hybrid_mesh(mesh, dcn)
    return [
        "+".join(a)
        for a in runs
        if laid_hosts.crosses(device_groups(laid, a)) and not hosts.crosses(device_groups(mesh, a))
    ]
