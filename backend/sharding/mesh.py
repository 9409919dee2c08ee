"""Device meshes: named axes over a permutation of device ids.

A ``Mesh`` is the pure-data twin of ``jax.sharding.Mesh``: axis names and sizes (major
to minor), the order in which device ids fill the mesh, and each axis's type (Auto,
Explicit or Manual). It converts to and from JAX meshes, JSON and Shardy text.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shardscope.backend.errors import MeshError, shortened

if TYPE_CHECKING:  # numpy and jax are imported where used: the CLI starts without them
    import numpy as np
    from jax import Device
    from jax.sharding import AbstractMesh
    from jax.sharding import AxisType as JaxAxisType
    from jax.sharding import Mesh as JaxMesh

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Only ASCII digits: int() would also read other scripts' digits ("٤" as 4).
_INT_RE = re.compile(r"-?[0-9]+")

# The largest mesh shardscope builds. Every device gets a tile, a label and a row in
# tables; a 1,000,000-device mesh took 8 s and 576 MB to describe one tensor.
MAX_DEVICES = 65_536
# The most axes a mesh may have: the device grid is a numpy array with one dimension per
# axis and numpy allows 64 (300 axes was a traceback); 32 is more than real meshes use.
MAX_AXES = 32


class AxisType(enum.Enum):
    """How a mesh axis takes part in sharding, as in ``jax.sharding.AxisType``."""

    AUTO = "Auto"
    EXPLICIT = "Explicit"
    MANUAL = "Manual"

    @classmethod
    def parse(cls, value: str | AxisType) -> AxisType:
        """Accept an AxisType, its value (``"Auto"``) or its name (``"auto"``)."""
        if isinstance(value, AxisType):
            return value
        text = str(value).strip()
        for member in cls:
            if text.lower() in (member.value.lower(), member.name.lower()):
                return member
        raise MeshError(f"unknown axis type {shortened(value)}: use one of Auto, Explicit, Manual")


@dataclass(frozen=True)
class MeshAxis:
    """One named mesh axis and how many devices lie along it."""

    name: str
    size: int


@dataclass(frozen=True)
class Mesh:
    """Named axes (major to minor) over ``device_order``, a permutation of device ids.

    ``device_order[i]`` is the id of the device at row-major position ``i`` of the mesh,
    exactly as ``jax.sharding.Mesh(devices.reshape(shape), names)`` lays them out.
    """

    axes: tuple[MeshAxis, ...]
    device_order: tuple[int, ...] = ()
    axis_types: tuple[AxisType, ...] = ()
    _grid: np.ndarray | None = field(
        default=None, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        axes = tuple(a if isinstance(a, MeshAxis) else MeshAxis(str(a[0]), a[1]) for a in self.axes)
        object.__setattr__(self, "axes", axes)
        _check_axes(axes)
        if len(axes) > MAX_AXES:
            raise MeshError(
                f"mesh has {len(axes)} axes: give at most {MAX_AXES} (merge axes of size 1)"
            )
        size = math.prod(a.size for a in axes)
        if size > MAX_DEVICES:
            # A product of huge sizes may have more digits than str() will print.
            exponent = int((size.bit_length() - 1) * math.log10(2))
            shown = f"{size:,}" if size < 10**30 else f"about 10^{exponent}"
            raise MeshError(
                f"mesh {_describe(axes)} has {shown} devices, more than shardscope shows "
                f"({MAX_DEVICES:,}): use smaller axis sizes"
            )
        order = tuple(int(d) for d in self.device_order) or tuple(range(size))
        _check_order(order, size)
        object.__setattr__(self, "device_order", order)
        types = tuple(AxisType.parse(t) for t in self.axis_types) or (AxisType.AUTO,) * len(axes)
        if len(types) != len(axes):
            raise MeshError(
                f"mesh has {len(axes)} axes but {len(types)} axis types: give one type per axis"
            )
        object.__setattr__(self, "axis_types", types)

    @classmethod
    def from_dict(
        cls,
        axes: Mapping[str, int],
        device_order: Sequence[int] | None = None,
        axis_types: Sequence[AxisType | str] | None = None,
    ) -> Mesh:
        """A mesh from ``{"data": 4, "model": 2}`` (insertion order is major to minor)."""
        return cls(
            tuple(MeshAxis(str(k), _as_size(k, v)) for k, v in axes.items()),
            tuple(device_order or ()),
            tuple(axis_types or ()),
        )

    @property
    def shape(self) -> dict[str, int]:
        """Axis name to size, major to minor (like ``jax.sharding.Mesh.shape``)."""
        return {a.name: a.size for a in self.axes}

    @property
    def axis_names(self) -> tuple[str, ...]:
        """Axis names, major to minor."""
        return tuple(a.name for a in self.axes)

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """Axis sizes, major to minor."""
        return tuple(a.size for a in self.axes)

    @property
    def size(self) -> int:
        """Number of devices in the mesh."""
        return len(self.device_order)

    @property
    def is_iota(self) -> bool:
        """Whether devices fill the mesh in id order 0, 1, 2, ..."""
        return self.device_order == tuple(range(self.size))

    def axis_index(self, name: str) -> int:
        """Position of axis ``name``; MeshError naming the known axes if absent."""
        try:
            return self.axis_names.index(name)
        except ValueError:
            raise MeshError(
                f"mesh has no axis {name!r}: use one of {', '.join(self.axis_names)}"
            ) from None

    def device_grid(self) -> np.ndarray:
        """Device ids as an integer array shaped like the mesh."""
        if self._grid is None:
            # Lazy: the CLI parser imports this module and starts without numpy.
            import numpy as np

            grid = np.asarray(self.device_order, dtype=np.int64).reshape(self.axis_sizes)
            grid.setflags(write=False)
            object.__setattr__(self, "_grid", grid)
        return self._grid

    def to_jax_abstract(self) -> AbstractMesh:
        """The matching ``jax.sharding.AbstractMesh`` (axis types carried over)."""
        # Lazy: the CLI parser imports this module and starts without jax.
        from jax.sharding import AbstractMesh

        return AbstractMesh(self.axis_sizes, self.axis_names, axis_types=self._jax_types())

    def to_jax(self, devices: Sequence[Device]) -> JaxMesh:
        """A ``jax.sharding.Mesh`` over ``devices``, picked by id in ``device_order``.

        ``devices`` may be any sequence of JAX devices (e.g. ``jax.devices()``); each
        device id in the mesh must be the ``.id`` of one of them.
        """
        # Lazy: the CLI parser imports this module and starts without jax.
        from jax.sharding import Mesh as JaxMesh

        validate_for_devices(self, len(devices))
        by_id = {int(d.id): d for d in devices}
        missing = [i for i in self.device_order if i not in by_id]
        if missing:
            raise MeshError(
                f"device ids {missing[:8]} are not attached: use a device order over ids "
                f"{sorted(by_id)[:8]}..."
            )
        # Lazy: the CLI parser imports this module and starts without numpy.
        import numpy as np

        arr = np.empty(self.size, dtype=object)
        for i, dev_id in enumerate(self.device_order):
            arr[i] = by_id[dev_id]
        return JaxMesh(arr.reshape(self.axis_sizes), self.axis_names, axis_types=self._jax_types())

    @classmethod
    def from_jax(cls, mesh: JaxMesh | AbstractMesh) -> Mesh:
        """A Mesh from a ``jax.sharding.Mesh`` or ``AbstractMesh`` (iota order for the latter)."""
        names = tuple(str(n) for n in mesh.axis_names)
        sizes = tuple(int(s) for s in mesh.axis_sizes)
        types = tuple(AxisType.parse(str(t).split(".")[-1]) for t in mesh.axis_types)
        order: tuple[int, ...] = ()
        try:
            devices = mesh.devices
        except (AttributeError, ValueError):
            devices = None  # an AbstractMesh has no devices: keep iota order
        if devices is not None:
            # Lazy: the CLI parser imports this module and starts without numpy.
            import numpy as np

            order = tuple(int(d.id) for d in np.asarray(devices).flat)
        return cls(tuple(MeshAxis(n, s) for n, s in zip(names, sizes, strict=True)), order, types)

    def _jax_types(self) -> tuple[JaxAxisType, ...]:
        # Lazy: the CLI parser imports this module and starts without jax.
        from jax.sharding import AxisType as JaxAxisType

        return tuple(getattr(JaxAxisType, t.value) for t in self.axis_types)

    def sdy_text(self, name: str = "mesh") -> str:
        """Shardy mesh op text: ``sdy.mesh @mesh = <["data"=4, "model"=2]>``.

        ``device_ids=[...]`` is added only when the order is not iota, as Shardy prints it.
        """
        return f"sdy.mesh @{name} = {self.sdy_attr_body()}"

    def sdy_attr_body(self) -> str:
        """The ``<[...]>`` part of a Shardy mesh, shared by the op and inline meshes."""
        axes = ", ".join(f'"{a.name}"={a.size}' for a in self.axes)
        if self.is_iota:
            return f"<[{axes}]>"
        ids = ", ".join(str(i) for i in self.device_order)
        return f"<[{axes}], device_ids=[{ids}]>"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict; ``Mesh.from_json`` reads it back."""
        return {
            "axes": [{"name": a.name, "size": a.size} for a in self.axes],
            "device_order": list(self.device_order),
            "axis_types": [t.value for t in self.axis_types],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Mesh:
        """Read ``to_json`` output; device order and axis types may be left out."""
        try:
            axes = tuple(
                MeshAxis(str(a["name"]), _as_size(a["name"], a["size"])) for a in data["axes"]
            )
        except (KeyError, TypeError) as exc:
            raise MeshError(
                f"mesh JSON lacks {exc}: give axes as [{{'name': ..., 'size': ...}}, ...]"
            ) from None
        return cls(axes, tuple(data.get("device_order") or ()), tuple(data.get("axis_types") or ()))

    def describe(self) -> str:
        """Short text like ``data=4,model=2`` (the CLI syntax)."""
        return _describe(self.axes)


def _describe(axes: Iterable[MeshAxis]) -> str:
    return ",".join(f"{a.name}={_short(a.size)}" for a in axes)


def _short(n: int) -> str:
    return str(n) if len(str(n)) <= 30 else f"{str(n)[:12]}...({len(str(n))} digits)"


def _as_size(name: Any, value: Any) -> int:
    if isinstance(value, str) and not _INT_RE.fullmatch(value.strip()):
        raise MeshError(
            f"mesh axis {name!r} has size {shortened(value)}: give a whole number >= 1 in digits 0-9"
        )
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise MeshError(
            f"mesh axis {name!r} has size {shortened(value)}: give a whole number >= 1"
        ) from None
    if size != value and not isinstance(value, str):
        raise MeshError(f"mesh axis {name!r} has size {value!r}: give a whole number >= 1")
    return size


def _check_axes(axes: tuple[MeshAxis, ...]) -> None:
    if not axes:
        raise MeshError("mesh has no axes: give at least one, e.g. data=8")
    seen: set[str] = set()
    for a in axes:
        if not a.name:
            raise MeshError("mesh axis has an empty name: name every axis, e.g. data=4")
        if not _NAME_RE.fullmatch(a.name):
            raise MeshError(
                f"mesh axis name {a.name!r} is not an identifier: use letters, digits and _"
            )
        if a.name in seen:
            raise MeshError(f"mesh axis {a.name!r} appears twice: give each axis a distinct name")
        seen.add(a.name)
        if not hasattr(a.size, "__index__") or isinstance(a.size, bool) or a.size < 1:
            raise MeshError(f"mesh axis {a.name!r} has size {a.size!r}: give a size >= 1")


def _check_order(order: tuple[int, ...], size: int) -> None:
    if len(order) != size:
        raise MeshError(
            f"device order has {len(order)} ids but the mesh has {size} devices: "
            f"list each of the {size} device ids exactly once"
        )
    if sorted(order) != list(range(size)):
        dupes = sorted({d for d in order if order.count(d) > 1}) if size <= 4096 else []
        what = f"repeats {dupes[:8]}" if dupes else "is not 0..N-1"
        raise MeshError(f"device order {what}: give a permutation of 0..{size - 1}, each id once")


def parse_mesh(
    text: str,
    device_order: str | Sequence[int] | None = None,
    axis_types: str | Sequence[AxisType | str] | None = None,
) -> Mesh:
    """Parse the CLI mesh syntax ``data=4,model=2`` (optionally with a device order).

    ``device_order`` may be ``"0,2,4,6,1,3,5,7"`` or a sequence of ints; ``axis_types``
    may be ``"Explicit,Auto"`` or a sequence, one per axis.
    """
    items = [p.strip() for p in str(text).split(",")]
    if items == [""]:
        raise MeshError("mesh is empty: give axes as name=size, e.g. --mesh data=4,model=2")
    if "" in items:
        raise MeshError(
            f"mesh {shortened(text)} has an empty entry: separate axes by single commas, "
            f"e.g. data=4,model=2"
        )
    axes: list[MeshAxis] = []
    for item in items:
        name, sep, size = item.partition("=")
        if not sep:
            raise MeshError(
                f"mesh axis {shortened(item)} has no size: write it as name=size, e.g. "
                f"{item if len(item) <= 20 else 'data'}=4"
            )
        axes.append(MeshAxis(name.strip(), _as_size(name.strip(), size.strip())))
    return Mesh(tuple(axes), parse_ints(device_order, "device order"), _parse_types(axis_types))


def parse_ints(value: str | Iterable[int] | None, what: str) -> tuple[int, ...]:
    """``"0,2,4"`` or a sequence of ints as a tuple; MeshError naming ``what`` otherwise."""
    if value is None:
        return ()
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if parts == [""]:
            return ()
        if not all(_INT_RE.fullmatch(p) and len(p) <= 12 for p in parts):
            raise MeshError(
                f"{what} {shortened(value)} is not a list of integers: write it like 0,2,4,6"
            )
        return tuple(int(p) for p in parts)
    return tuple(int(v) for v in value)


def _parse_types(value: str | Sequence[AxisType | str] | None) -> tuple[AxisType, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [p.strip() for p in value.split(",")]
        if value == [""]:
            return ()
        if "" in value:
            raise MeshError(
                "axis types have an empty entry: give one of Auto, Explicit, Manual per axis, "
                "separated by single commas"
            )
    return tuple(AxisType.parse(v) for v in value)


def validate_for_devices(mesh: Mesh, n_devices: int) -> None:
    """Raise MeshError unless ``mesh`` covers exactly ``n_devices`` devices.

    JAX and PyTorch/XLA both require a mesh that spans every attached device.
    """
    if mesh.size != n_devices:
        raise MeshError(
            f"mesh {mesh.describe()} has {mesh.size} devices but {n_devices} are attached: "
            f"use axis sizes whose product is {n_devices}"
        )


def _preset(sizes: Sequence[int], names: Sequence[str]) -> Mesh:
    return Mesh(tuple(MeshAxis(n, s) for n, s in zip(names, sizes, strict=True)))


PRESETS: dict[str, Mesh] = {
    "1-D data=8": _preset([8], ["data"]),
    "1-D data=64": _preset([64], ["data"]),
    "2-D data=4,model=2": _preset([4, 2], ["data", "model"]),
    "2-D data=2,model=4": _preset([2, 4], ["data", "model"]),
    "3-D data=2,fsdp=2,model=2": _preset([2, 2, 2], ["data", "fsdp", "model"]),
    "3-D pipe=4,data=4,model=4": _preset([4, 4, 4], ["pipe", "data", "model"]),
    "TPU 2x2x1 (v4-8)": _preset([2, 2, 1], ["x", "y", "z"]),
    "TPU 2x4 (v5e-8)": _preset([2, 4], ["x", "y"]),
    "TPU 4x4 (v5e-16)": _preset([4, 4], ["x", "y"]),
    "TPU 4x4x4 (v4-128)": _preset([4, 4, 4], ["x", "y", "z"]),
    "TPU 16x16 (v5e-256)": _preset([16, 16], ["x", "y"]),
    "TPU 16x16x16 (4096 chips)": _preset([16, 16, 16], ["x", "y", "z"]),
}
