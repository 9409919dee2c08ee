"""JAX's text for a partition spec: the ``PartitionSpec`` repr a user would write."""

from __future__ import annotations

from shardscope.backend.sharding.spec import Spec


def jax_spec_text(spec: Spec, ndim: int | None = None) -> str:
    """``P('data', None, ('x', 'y'))``, JAX's PartitionSpec repr (open dims as UNCONSTRAINED).

    With ``ndim`` the spec is first padded to that rank with replicated dims.
    """
    dims = spec.padded(ndim).dims if ndim is not None else spec.dims
    parts = []
    for d in dims:
        if d.is_open and not d.axes:
            parts.append("P.UNCONSTRAINED")
        elif not d.axes:
            parts.append("None")
        elif len(d.axes) == 1:
            parts.append(repr(d.axes[0]))
        else:
            parts.append("(" + ", ".join(repr(a) for a in d.axes) + ")")
    return "P(" + ", ".join(parts) + ")"
