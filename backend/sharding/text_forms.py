"""Every text form of one sharding side by side: JAX, Shardy, HLO, PyTorch/XLA and its kind."""

from __future__ import annotations

from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.jax_text import jax_spec_text
from shardscope.backend.sharding.kinds import sharding_kind
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.sdy_text import sdy_sharding_text
from shardscope.backend.sharding.spec import Spec


def sharding_texts(mesh: Mesh, spec: Spec, ndim: int, *, torch_xla: bool = False) -> dict[str, str]:
    """The ``jax``, ``sdy``, ``hlo`` and ``kind`` texts of ``spec`` over ``mesh``, and
    with ``torch_xla`` the ``torch_xla`` one (``mark_sharding_text``).

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


def _axes(spec: Spec | list | tuple, ndim: int | None) -> list[tuple[str, ...]]:
    if isinstance(spec, Spec):
        dims = spec.padded(ndim).dims if ndim is not None else spec.dims
        return [tuple(d.axes) for d in dims]
    out = [tuple(d) for d in spec]
    if ndim is not None:
        out += [()] * (ndim - len(out))
    return out
