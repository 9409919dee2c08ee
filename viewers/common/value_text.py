"""How the views name a program value: its type, its facts line and its badge's tooltip.

Plain text, no Qt: the outline, the graph's badges and the inspector each word a value
their own way, and those wordings are kept here side by side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardscope.backend.sharding.spec import Spec

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Value


def type_text(value: Value) -> str:
    """``f32[32x64]`` (``f32[]`` for a scalar, the bare dtype when the shape is unknown)."""
    if value.shape is None:
        return value.dtype
    return f"{value.dtype}[{'x'.join(map(str, value.shape))}]"


def facts_text(value: Value) -> str:
    """``argument · f32[16, 32]``: the value's role, dtype and shape (``n/a`` if unknown)."""
    shape = "[" + ", ".join(str(s) for s in value.shape) + "]" if value.shape is not None else "n/a"
    return f"{value.role} \u00b7 {value.dtype}{shape}"


def badge_tooltip(
    value: Value,
    spec: Spec | None,
    origin: str,
    compiled: tuple[tuple[str, ...], ...] | None = None,
) -> str:
    """Name, type, current spec (or that propagation has not decided it) and its origin;
    the sharding XLA compiled it with where that differs (``compiled``, axes per
    dimension); a ranked value adds how to shard it."""
    shape = "x".join(map(str, value.shape)) if value.shape else "scalar"
    text = spec.format() if spec is not None else "unknown until propagation"
    tip = f"{value.display_name}  {value.dtype}[{shape}]\n{text}  ({origin})"
    if compiled is not None:
        shown = Spec.of(*(d or None for d in compiled)).format()
        tip += f"\n{shown}  (compiled: XLA computed it so, not as propagated)"
    if value.rank:
        tip += "\ndrop a mesh axis on a dimension to shard it"
    return tip
