"""Which sharding a view shows for a value, and where that sharding comes from.

The user's spec wins; else the latest propagation result's; else the annotation the
program's own code wrote; else the sharding is unknown (``?``) until propagation runs.
Tiles are another matter: they show how the value is laid out, which is what the
compiler decided (``decided_spec``) once a propagation result lists the value; a user's
spec with open dimensions is only where propagation started.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.sdy_text import readable_spec
from shardscope.backend.sharding.spec import Spec

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.propagation.result import PropagationResult, ValueInfo

Origin = Literal["user", "propagated", "code", "none"]


class PropagatedSpecs:
    """The final spec of each value of one propagation result, looked up by value id."""

    def __init__(self, result: PropagationResult) -> None:
        self.result = result
        self._by_id: dict[int, ValueInfo] = {v.id: v for v in result.values}

    def get(self, value_id: int) -> Spec | None:
        """The value's spec after propagation, or None if the result does not list it."""
        info = self._by_id.get(value_id)
        if info is None:
            return None
        return Spec.of(*[tuple(d) if d else None for d in info.spec])


class FinalSpecs(PropagatedSpecs):
    """The final specs a propagation sends ahead of its result (``result.final_dims``:
    axes per dimension of the values that have any); they read as the result will."""

    def __init__(self, dims: Mapping[int, tuple[tuple[str, ...], ...]], graph: ProgramGraph):
        self.dims = dims
        self.graph = graph

    def get(self, value_id: int) -> Spec | None:
        dims = self.dims.get(value_id)
        if dims is None:
            if not 0 <= value_id < len(self.graph.values):
                return None
            return Spec.of(*[None] * self.graph.values[value_id].rank)
        return Spec.of(*[tuple(d) if d else None for d in dims])


def shown_spec(
    value_id: int,
    user: Mapping[int, Spec],
    propagated: PropagatedSpecs | None,
    graph: ProgramGraph | None,
) -> Spec | None:
    """The Spec a view shows for a value, padded to the value's rank where it fits."""
    value = graph.values[value_id] if graph is not None else None
    spec = user.get(value_id)
    if spec is None and propagated is not None:
        spec = propagated.get(value_id)
    if spec is None and value is not None and value.code_sharding:
        spec = readable_spec(value.code_sharding)
    if spec is None or value is None:
        return spec
    try:
        return spec.padded(value.rank)
    except SpecError:
        return spec


def decided_spec(
    value_id: int,
    user: Mapping[int, Spec],
    propagated: PropagatedSpecs | None,
    graph: ProgramGraph | None,
) -> Spec | None:
    """The propagation result's Spec for a value (padded to its rank), else ``shown_spec``."""
    spec = propagated.get(value_id) if propagated is not None else None
    if spec is None:
        return shown_spec(value_id, user, propagated, graph)
    if graph is None:
        return spec
    try:
        return spec.padded(graph.values[value_id].rank)
    except SpecError:
        return spec


def shown_origin(
    value_id: int,
    user: Mapping[int, Spec],
    propagated: PropagatedSpecs | None,
    graph: ProgramGraph | None,
) -> Origin:
    """Where ``shown_spec`` comes from: ``user``, ``propagated``, ``code`` or ``none``."""
    if value_id in user:
        return "user"
    if propagated is not None and propagated.get(value_id):
        return "propagated"
    if graph is not None and graph.values[value_id].code_sharding:
        return "code"
    return "none"
