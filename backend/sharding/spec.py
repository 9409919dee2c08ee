"""Partition specs: how each tensor dimension is split over mesh axes.

CLI syntax (design.md section 3): dims separated by commas; a dim is ``_`` or ``None``
(replicated), an axis name, or several axes joined by ``+`` (a tuple, major first:
``data+model``). A trailing ``?`` marks a dim open (propagation may shard it further),
and a trailing ``@pN`` gives it a user priority (lower N is stronger, as in Shardy):
``data+model?@p1``. A lone ``?`` is an open replicated dim.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shardscope.backend.errors import SpecError, shortened
from shardscope.backend.sharding.mesh import Mesh

if TYPE_CHECKING:  # jax is imported where used: the CLI starts without it
    from jax import Device
    from jax.sharding import NamedSharding, PartitionSpec

# Digits are ASCII only: \d would also read other scripts' digits ("p٤" as p4).
_DIM_RE = re.compile(
    r"(?P<axes>[^?@]*?)\s*(?P<open>\?)?\s*(?:@\s*p(?P<prio>[0-9]+))?\s*(?P<open2>\?)?"
)
_AXIS_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Priorities beyond this are typing mistakes, not an order anyone means.
MAX_PRIORITY = 999_999
_REPLICATED_WORDS = ("", "_", "None", "none")


@dataclass(frozen=True)
class DimSpec:
    """One tensor dimension: mesh axes (major to minor), open or closed, optional priority."""

    axes: tuple[str, ...] = ()
    is_open: bool = False
    priority: int | None = None

    @property
    def is_replicated(self) -> bool:
        """No mesh axis splits this dimension."""
        return not self.axes

    def format(self) -> str:
        """This dim in CLI syntax: ``_``, ``data``, ``data+model?@p1``."""
        text = "+".join(self.axes) if self.axes else ("" if self.is_open else "_")
        if self.is_open:
            text += "?"
        if self.priority is not None:
            text += f"@p{self.priority}"
        return text


@dataclass(frozen=True)
class Spec:
    """A partition spec: one DimSpec per listed tensor dimension.

    ``replicated`` lists axes declared explicitly replicated (Shardy's ``replicated=``);
    they split nothing and only matter to propagation.
    """

    dims: tuple[DimSpec, ...] = ()
    replicated: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dims", tuple(_as_dim(d) for d in self.dims))
        object.__setattr__(self, "replicated", tuple(self.replicated))

    @classmethod
    def of(cls, *entries: None | str | Sequence[str]) -> Spec:
        """A closed spec from PartitionSpec-like entries: ``Spec.of("data", None, ("x", "y"))``."""
        return cls(tuple(_as_dim(e) for e in entries))

    def __len__(self) -> int:
        return len(self.dims)

    @property
    def used_axes(self) -> tuple[str, ...]:
        """Every axis that splits some dimension, in spec order."""
        return tuple(a for d in self.dims for a in d.axes)

    def padded(self, rank: int) -> Spec:
        """This spec padded with closed replicated dims to ``rank`` (JAX's rule)."""
        if len(self.dims) > rank:
            raise SpecError(
                f"spec {self.format()!r} has {len(self.dims)} entries but the tensor has rank "
                f"{rank}: drop {len(self.dims) - rank} trailing entries"
            )
        return Spec(self.dims + (DimSpec(),) * (rank - len(self.dims)), self.replicated)

    def format(self) -> str:
        """CLI syntax, read back by ``parse_spec``."""
        return ",".join(d.format() for d in self.dims)

    def __str__(self) -> str:
        return self.format()

    def to_json(self) -> list[None | str | list[str]]:
        """Entries as JSON: None, an axis name, or a list of axis names.

        Openness and priorities are not part of this form (use ``format`` for them).
        """
        out: list[None | str | list[str]] = []
        for d in self.dims:
            if not d.axes:
                out.append(None)
            elif len(d.axes) == 1:
                out.append(d.axes[0])
            else:
                out.append(list(d.axes))
        return out

    @classmethod
    def from_json(cls, data: Iterable[None | str | Sequence[str]]) -> Spec:
        """Read ``to_json`` output (a list whose entries are None, str or list of str)."""
        if isinstance(data, str | bytes) or not isinstance(data, Iterable):
            raise SpecError(
                f"spec JSON {data!r} is not a list: give one entry per dim (null, name or [names])"
            )
        return cls.of(*data)

    def to_jax(self) -> PartitionSpec:
        """The ``jax.sharding.PartitionSpec``; an open replicated dim is ``P.UNCONSTRAINED``.

        JAX cannot say "these axes, and maybe more", so an open dim with axes is an error.
        """
        # Lazy: the CLI parser imports this module and starts without jax.
        from jax.sharding import PartitionSpec

        entries: list[Any] = []
        for i, d in enumerate(self.dims):
            if d.is_open and d.axes:
                raise SpecError(
                    f"dim {i} ({d.format()}) is open with axes, which a JAX PartitionSpec "
                    f"cannot express: drop the '?' or the axes"
                )
            if d.is_open:
                entries.append(PartitionSpec.UNCONSTRAINED)
            elif not d.axes:
                entries.append(None)
            elif len(d.axes) == 1:
                entries.append(d.axes[0])
            else:
                entries.append(tuple(d.axes))
        return PartitionSpec(*entries)

    @classmethod
    def from_jax(cls, spec: PartitionSpec) -> Spec:
        """A Spec from a ``jax.sharding.PartitionSpec`` (``UNCONSTRAINED`` becomes open)."""
        # Lazy: the CLI parser imports this module and starts without jax.
        from jax.sharding import PartitionSpec

        dims: list[DimSpec] = []
        for entry in tuple(spec):
            if entry is PartitionSpec.UNCONSTRAINED:
                dims.append(DimSpec(is_open=True))
            else:
                dims.append(_as_dim(entry))
        return cls(tuple(dims))


def _as_dim(entry: Any) -> DimSpec:
    if isinstance(entry, DimSpec):
        return entry
    if entry is None:
        return DimSpec()
    if isinstance(entry, str):
        return DimSpec((entry,))
    if isinstance(entry, Sequence):
        axes = tuple(entry)
        if not all(isinstance(a, str) for a in axes):
            raise SpecError(
                f"spec entry {entry!r} mixes non-names: use None, a name or a list of names"
            )
        return DimSpec(axes)
    raise SpecError(f"spec entry {entry!r} is not None, a name or a list of names: fix that entry")


def parse_spec(text: str) -> Spec:
    """Parse CLI spec syntax (see the module docstring) into a Spec.

    The empty string is the empty spec (fully replicated, any rank in non-strict mode).
    """
    text = str(text).strip()
    if not text:
        return Spec()
    dims = []
    for i, raw in enumerate(text.split(",")):
        part = raw.strip()
        m = _DIM_RE.fullmatch(part)
        if not m or (m["open"] and m["open2"]):
            raise SpecError(
                f"spec dim {i} {_quote(part)} is malformed: write _, an axis, axes joined by +, "
                f"then optional ? and @pN (e.g. data+model?@p1)"
            )
        axes_text = m["axes"].strip()
        if axes_text in _REPLICATED_WORDS:
            if axes_text == "" and not (m["open"] or m["open2"]):
                raise SpecError(f"spec dim {i} is empty: write _ for a replicated dim")
            axes: tuple[str, ...] = ()
        else:
            axes = tuple(a.strip() for a in axes_text.split("+"))
            for a in axes:
                if not _AXIS_RE.fullmatch(a):
                    raise SpecError(
                        f"spec dim {i} {_quote(part)} has a bad axis name {a!r}: "
                        f"join axis names with + (e.g. data+model)"
                    )
        prio = None
        if m["prio"] is not None:
            if len(m["prio"]) > len(str(MAX_PRIORITY)) or int(m["prio"]) > MAX_PRIORITY:
                raise SpecError(
                    f"spec dim {i} has priority p{_clip(m['prio'])}: give one from p0 "
                    f"(strongest) to p{MAX_PRIORITY}"
                )
            prio = int(m["prio"])
        dims.append(DimSpec(axes, bool(m["open"] or m["open2"]), prio))
    return Spec(tuple(dims))


def _quote(text: str) -> str:
    """``repr(text)``, cut to fit a one-line message."""
    return shortened(text, 80)


def _clip(text: str) -> str:
    return text if len(text) <= 20 else f"{text[:12]}...({len(text)} digits)"


def axes_text(axes: Sequence[str]) -> str:
    """One dimension's axes as a badge's chip shows them: ``data+model``, ``_`` for none
    (replicated)."""
    return "+".join(axes) or "_"


def dims_text(dims: Sequence[Sequence[str]] | Spec | None, unknown: str = "?") -> str:
    """Axes per dimension as badges and messages show them, ``[data+model, _]`` (``_``:
    replicated; a ``Spec``'s open marks and priorities left out); ``unknown`` where the
    sharding is not known (None)."""
    if dims is None:
        return unknown
    if isinstance(dims, Spec):
        dims = [d.axes for d in dims.dims]
    return "[" + ", ".join(axes_text(d) for d in dims) + "]"


def spec_words(spec: Spec | None) -> str:
    """A user's spec as History and notices show it, marks included: ``[data+model, _?]``,
    or ``no spec``."""
    if spec is None:
        return "no spec"
    return "[" + ", ".join(d.format() for d in spec.dims) + "]"


def format_spec(spec: Spec) -> str:
    """CLI syntax for ``spec`` (the inverse of ``parse_spec``)."""
    return spec.format()


def validate_spec(
    spec: Spec, mesh: Mesh, shape: Sequence[int] | None = None, *, strict: bool = False
) -> list[str]:
    """Check ``spec`` against ``mesh`` (and ``shape`` if given); return warnings.

    Raises SpecError for an unknown axis, an axis used twice, or a wrong rank (strict
    mode, PyTorch/XLA's rule, needs exactly one entry per dim; JAX's non-strict rule
    pads a short spec but still rejects a long one). A dim that its axes do not divide
    is allowed, as in JAX, and reported as a padding warning.
    """
    names = set(mesh.axis_names)
    seen: set[str] = set()
    for i, d in enumerate(spec.dims):
        for a in d.axes:
            if a not in names:
                raise SpecError(
                    f"spec dim {i} uses unknown axis {_quote(a)}: use one of {', '.join(mesh.axis_names)}"
                )
            if a in seen:
                raise SpecError(
                    f"axis {_quote(a)} is used twice in spec {_quote(spec.format())}: use each mesh axis at most once"
                )
            seen.add(a)
    for a in spec.replicated:
        if a not in names:
            raise SpecError(
                f"replicated axis {a!r} is not in the mesh: use one of {', '.join(mesh.axis_names)}"
            )
        if a in seen:
            raise SpecError(
                f"axis {a!r} both splits a dim and is declared replicated: remove it from one"
            )
    warnings: list[str] = []
    if shape is None:
        return warnings
    shape = tuple(int(s) for s in shape)
    rank = len(shape)
    if strict and len(spec.dims) != rank:
        raise SpecError(
            f"spec {_quote(spec.format())} has {len(spec.dims)} entries but the tensor has rank {rank}: "
            f"give exactly one entry per dim (strict mode)"
        )
    full = spec.padded(rank)
    sizes = mesh.shape
    for i, (d, n) in enumerate(zip(full.dims, shape, strict=True)):
        shards = math.prod(sizes[a] for a in d.axes)
        if shards > 1 and n % shards:
            tile = -(-n // shards)
            pad = tile * shards - n
            warnings.append(
                f"dim {i} (size {n}) is split {shards} ways by {'+'.join(d.axes)}: uneven, "
                f"tiles of {tile} with {pad} padding; use a size divisible by {shards} to avoid it"
            )
    return warnings


def check_spec(spec: Spec, mesh: Mesh, shape: Sequence[int], *, strict: bool = False) -> Spec:
    """Validate (raising on errors) and return ``spec`` padded to the tensor's rank."""
    validate_spec(spec, mesh, shape, strict=strict)
    return spec.padded(len(shape))


def shards_per_dim(spec: Spec, mesh: Mesh) -> tuple[int, ...]:
    """How many ways each listed dim is split."""
    sizes = mesh.shape
    return tuple(math.prod(sizes[a] for a in d.axes) for d in spec.dims)


def spec_from_named_sharding(sharding: NamedSharding) -> tuple[Mesh, Spec]:
    """The Mesh and Spec of a ``jax.sharding.NamedSharding``."""
    return Mesh.from_jax(sharding.mesh), Spec.from_jax(sharding.spec)


def to_named_sharding(
    mesh: Mesh, spec: Spec, devices: Sequence[Device] | None = None
) -> NamedSharding:
    """A ``jax.sharding.NamedSharding``: on real ``devices`` if given, else an AbstractMesh."""
    # Lazy: the CLI parser imports this module and starts without jax.
    from jax.sharding import NamedSharding

    validate_spec(spec, mesh)
    jmesh = mesh.to_jax(devices) if devices is not None else mesh.to_jax_abstract()
    return NamedSharding(jmesh, spec.to_jax())
