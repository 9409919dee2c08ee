"""Sharding kinds: what a sharding is by HLO's meaning and by PyTorch/XLA's rule."""

from __future__ import annotations

from dataclasses import dataclass

from shardscope.backend.sharding.hlo_text import hlo_sharding_text, parse_hlo_sharding
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, validate_spec


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

    def describe(self) -> str:
        """The HLO kind, and PyTorch/XLA's where it differs: ``tiled (PyTorch/XLA: partial)``."""
        return self.hlo if not self.differs else f"{self.hlo} (PyTorch/XLA: {self.torch_xla})"


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
