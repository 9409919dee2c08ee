"""How a collective's cause is worded: verbs, where it happens, the op's rule, a conflict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from shardscope.backend.run.moved_tensor import Found
from shardscope.backend.sharding.spec import dims_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Op, ProgramGraph
    from shardscope.backend.propagation.conflicts import Conflict

VERBS = {
    "all-gather": "all-gathered",
    "all-reduce": "all-reduced",
    "reduce-scatter": "reduce-scattered",
    "all-to-all": "moved by an all-to-all",
    "collective-permute": "sent to other devices (collective-permute)",
}


def where_text(op: str, line: int | None, way: str) -> str:
    """``dot_general (line 10, backward)``."""
    parts = [f"line {line}"] if line is not None else []
    parts += ["backward"] if way == "backward" else []
    return f"{op} ({', '.join(parts)})" if parts else op


def conflict_text(conflicts: Sequence[Conflict], index: int) -> str:
    """``conflict 0 on factor j (operand-0 data; ...): by RULE, Shardy kept data``."""
    c = conflicts[index]
    offers = "; ".join(f"{p.tensor} {'+'.join(p.axes) or '_'}" for p in c.proposals)
    kept = "+".join(c.kept) or "nothing"
    return f"conflict {index} on factor {c.factor} ({offers}): by {c.rule}, Shardy kept {kept}"


def rule_text(graph: ProgramGraph, op: Op, found: Found, moved: set[str], compiled: bool) -> str:
    """Why ``op``'s own sharding rule makes the collective move ``found``."""
    dim = f"dimension {found.dim}" if found.dim is not None else "a dimension"
    over = "+".join(sorted(moved)) or "its axes"
    held = "which XLA compiled sharded" if compiled else "sharded"
    if found.how == "contract":
        return (
            f"{op.short_name} contracts its {dim}, {held} there: each device sums "
            f"its part and the partial sums are added across devices"
        )
    if found.how == "reduce":
        return (
            f"{op.short_name} reduces its {dim}, {held} there: each device reduces "
            f"its part and the partial results are added across devices"
        )
    if found.how == "select":
        return _select_text(graph, op, found, over, held)
    if found.how == "shift":
        return _shift_text(op, found, over, held)
    if found.how in ("move", "permute"):
        return f"{op.short_name} needs it as {dims_text(found.needed)}"
    if found.how == "gather" and op.name == "stablehlo.dot_general":
        return f"{op.short_name} needs its {dim} whole on each device"
    if found.how == "gather" and op.name == "stablehlo.gather":
        return (
            f"{op.short_name} looks up elements along its {dim}, {held} over {over}: "
            f"the indices may name any of them, so it is gathered whole first"
        )
    return f"{op.short_name} needs {dims_text(found.needed)} ({dim} whole on each device)"


def _select_text(graph: ProgramGraph, op: Op, found: Found, over: str, held: str) -> str:
    shape = graph.values[found.value].shape or ()
    size = shape[found.dim] if found.dim is not None and found.dim < len(shape) else None
    dim = f"dimension {found.dim}" if found.dim is not None else "a dimension"
    count = f" ({size} element{'s' if size != 1 else ''})" if size is not None else ""
    what = {
        "stablehlo.gather": "looks up elements of",
        "stablehlo.dynamic_slice": "takes a part of",
        "stablehlo.slice": "takes a part of",
        "stablehlo.reshape": "reshapes",
    }.get(op.name, "needs all of")
    return (
        f"{op.short_name} {what} its {dim}{count}, {held} over {over}: each device "
        f"contributes the part it holds (zeros for the rest) and the all-reduce adds "
        f"them, so every device has the whole"
    )


def _shift_text(op: Op, found: Found, over: str, held: str) -> str:
    dim = f"dimension {found.dim}" if found.dim is not None else "a dimension"
    if op.name == "stablehlo.concatenate":
        return (
            f"{op.short_name} joins its operands along {dim}, {held} over {over}: "
            f"each piece of the result comes from another device's piece (a rotation "
            f"such as jnp.roll), so the pieces are sent across"
        )
    if op.name in ("stablehlo.slice", "stablehlo.pad", "stablehlo.dynamic_slice"):
        return (
            f"{op.short_name} shifts where the elements of {dim} lie ({held} over "
            f"{over}): the devices' pieces no longer line up with it, so each device "
            f"receives its neighbour's edge (a halo exchange)"
        )
    return (
        f"{op.short_name} moves elements along {dim}, {held} over {over}: they "
        f"cross from device to device"
    )
