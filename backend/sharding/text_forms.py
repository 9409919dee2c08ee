"""Every text form of one sharding side by side: JAX, Shardy, HLO, PyTorch/XLA, DTensor
and its kind."""

from __future__ import annotations

from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.jax_text import jax_spec_text
from shardscope.backend.sharding.kinds import sharding_kind
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import sdy_sharding_text
from shardscope.backend.sharding.spec import Spec


def sharding_texts(mesh: Mesh, spec: Spec, ndim: int, *, torch_xla: bool = False) -> dict[str, str]:
    """The ``jax``, ``sdy``, ``hlo`` and ``kind`` texts of ``spec`` over ``mesh``, and
    with ``torch_xla`` the ``torch_xla`` one (``mark_sharding_text``) and the ``dtensor``
    one (``dtensor_placements_text``).

    The HLO text numbers devices by mesh position, as JAX prints it. Raises the
    backend's errors (SpecError, MeshError) when the spec does not fit the mesh or rank.
    """
    # The kind first: its checks decide which error a spec with several faults reports.
    kind = sharding_kind(mesh, spec, ndim)
    out = {
        "jax": jax_spec_text(spec, ndim),
        "sdy": sdy_sharding_text(mesh, spec, ndim),
        "hlo": hlo_sharding_text(mesh, spec, ndim),
        "kind": kind.describe(),
    }
    if torch_xla:
        out["torch_xla"] = mark_sharding_text(spec, ndim)
        out["dtensor"] = dtensor_placements_text(mesh, spec, ndim)
    return out


def torch_xla_spec_text(spec: Spec | list | tuple, ndim: int | None = None) -> str | None:
    """The partition spec as PyTorch/XLA's ``mark_sharding`` takes it: one entry per
    dimension, ``None`` for a replicated one and a tuple for several axes, e.g.
    ``("data", None)`` or ``(("data", "model"), None)``.

    ``spec`` is a Spec or axes per dimension (``[["data"], []]``). None where PyTorch/XLA
    has no such spec: a sub-axis (``data:(1)2``) names part of a mesh axis.
    """
    dims = _axes(spec, ndim)
    parts = []
    for axes in dims:
        if any(":(" in a for a in axes):
            return None
        if not axes:
            parts.append("None")
        elif len(axes) == 1:
            parts.append(f'"{axes[0]}"')
        else:
            parts.append("(" + ", ".join(f'"{a}"' for a in axes) + ")")
    if len(parts) == 1:
        return f"({parts[0]},)"
    return "(" + ", ".join(parts) + ")"


def mark_sharding_text(
    spec: Spec | list | tuple, ndim: int | None = None, tensor: str = "t"
) -> str:
    """The ``xs.mark_sharding(t, mesh, (...))`` call that gives ``tensor`` this sharding,
    or a sentence saying PyTorch/XLA has none (``torch_xla_spec_text``)."""
    text = torch_xla_spec_text(spec, ndim)
    if text is None:
        return "(no PyTorch/XLA spec: a sub-axis names part of a mesh axis)"
    return f"xs.mark_sharding({tensor}, mesh, {text})"


def dtensor_spec_text(mesh: Mesh, spec: Spec | list | tuple, ndim: int | None = None) -> str | None:
    """The sharding as DTensor's placements: one per mesh axis in the mesh's order,
    ``Shard(d)`` where tensor dim ``d`` is sharded over that axis and ``Replicate()``
    elsewhere, e.g. ``[Shard(0), Replicate()]``.

    A dim sharded over several axes gives each of them ``Shard(d)``: DTensor splits the
    dim over its mesh dims in the mesh's order, the first the major one (torch 2.9's
    ``[Shard(0), Shard(0)]`` on a (2, 4) mesh puts rows 8i+2j..8i+2j+2 of 16 on position
    (i, j)), so the spec's axes must come in the mesh's order. torch_xla 2.9's
    ``distribute_tensor`` on an "xla" mesh keeps only the last of such ``Shard(d)``.
    None where DTensor has no such placements (``dtensor_placements_text`` says why).
    Raises MeshError for an axis the mesh lacks.
    """
    dims = _axes(spec, ndim)
    if _no_placements(mesh, dims) is not None:
        return None
    placements = ["Replicate()"] * len(mesh.axis_names)
    for d, axes in enumerate(dims):
        for a in axes:
            placements[mesh.axis_index(a)] = f"Shard({d})"
    return "[" + ", ".join(placements) + "]"


def dtensor_placements_text(mesh: Mesh, spec: Spec | list | tuple, ndim: int | None = None) -> str:
    """DTensor's placements (``dtensor_spec_text``), or a sentence saying why DTensor has
    none: a sub-axis, or a dim's axes out of the mesh's order."""
    text = dtensor_spec_text(mesh, spec, ndim)
    if text is not None:
        return text
    return f"(no DTensor placements: {_no_placements(mesh, _axes(spec, ndim))})"


def _no_placements(mesh: Mesh, dims: list[tuple[str, ...]]) -> str | None:
    """Why DTensor has no placements for ``dims`` over ``mesh``, or None where it has."""
    for d, axes in enumerate(dims):
        if any(":(" in a for a in axes):
            return "a sub-axis names part of a mesh axis"
        where = [mesh.axis_index(a) for a in axes]
        if where != sorted(where):
            return (
                f"dim {d} takes {', '.join(axes)} in that order, and DTensor splits a dim "
                "over mesh axes in the mesh's order"
            )
    return None


def _axes(spec: Spec | list | tuple, ndim: int | None) -> list[tuple[str, ...]]:
    if isinstance(spec, Spec):
        dims = spec.padded(ndim).dims if ndim is not None else spec.dims
        return [tuple(d.axes) for d in dims]
    out = [tuple(d) for d in spec]
    if ndim is not None:
        out += [()] * (ndim - len(out))
    return out
