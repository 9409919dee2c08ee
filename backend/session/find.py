"""Find: what a query names in a program, by name or by sharding, with counts.

A query is words and filters separated by spaces; a match satisfies all of them. A word
matches, case-insensitively, part of an op's name (``dot_general``, ``call @relu``), a
scope's own name, a named tensor's name (arguments and results; other tensors are
results of the ops listed) or a called function's name. Filters ask about the
sharding:

- ``axis:NAME``: tensors whose shown sharding uses mesh axis NAME on some dimension;
- ``collective`` or ``collective:KIND``: ops where propagation predicts a collective
  (``all-gather``, ``all_gather`` and ``allgather`` name the same kind);
- ``conflict``: ops where propagation settled a conflict.

``find`` is pure: it reads the graph, a value's shown spec (a function, so the session's
precedence of user, propagated and code specs stays the session's) and the propagation
result, and returns every match in program order, grouped by kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Op, ProgramGraph
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.sharding.spec import Spec

KINDS = ("scope", "op", "tensor", "callee")
FILTERS = ("axis", "collective", "conflict")


@dataclass(frozen=True)
class Match:
    """One thing a query found. ``op`` is an op that shows it (itself, the first op of a
    scope, the first call of a callee, a tensor's producer) when there is one."""

    kind: str  # one of KINDS
    label: str
    detail: str = ""
    count: int = 1  # ops in a scope, call sites of a callee, collectives of an op
    op: int | None = None
    value: int | None = None
    scope: str | None = None
    function: str | None = None


@dataclass
class Query:
    words: list[str] = field(default_factory=list)
    axes: list[str] = field(default_factory=list)
    collectives: list[str | None] = field(default_factory=list)
    conflict: bool = False

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of thing the filters can hold."""
        if self.axes and (self.collectives or self.conflict):
            return ()
        if self.axes:
            return ("tensor",)
        if self.conflict:
            return ("op",)
        if self.collectives:
            # a collective at a function's return belongs to the tensor returned
            return ("op", "tensor")
        return KINDS

    @property
    def empty(self) -> bool:
        return not (self.words or self.axes or self.collectives or self.conflict)


@dataclass
class FindResult:
    query: Query
    matches: list[Match]

    def counts(self) -> dict[str, int]:
        """How many matches of each kind, every kind listed."""
        out = dict.fromkeys(KINDS, 0)
        for m in self.matches:
            out[m.kind] += 1
        return out

    def summary(self) -> str:
        """``3 ops · 1 scope`` (kinds with matches), or ``no match``."""
        counts = self.counts()
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items() if n]
        return " · ".join(parts) or "no match"


def parse_query(text: str) -> Query:
    """Split ``text`` into words and filters; an unknown filter is an error naming the
    known ones."""
    query = Query()
    for term in text.split():
        key, colon, arg = term.partition(":")
        key = key.lower()
        if not colon:
            if key in ("conflict", "conflicts"):
                query.conflict = True
            elif key in ("collective", "collectives"):
                query.collectives.append(None)
            else:
                query.words.append(term.lower())
            continue
        if key == "axis":
            if not arg:
                raise ShardscopeError("axis: needs a mesh axis name, e.g. axis:model")
            query.axes.append(arg)
        elif key in ("collective", "collectives"):
            query.collectives.append(_kind_key(arg) if arg else None)
        elif key in ("conflict", "conflicts"):
            query.conflict = True
        else:
            raise ShardscopeError(
                f"find knows no filter {key!r}: use axis:NAME, collective[:KIND] or conflict"
            )
    return query


def _kind_key(kind: str) -> str:
    return kind.lower().replace("-", "").replace("_", "")


def _uses_axis(spec: Spec | None, axis: str) -> bool:
    if spec is None:
        return False
    return any(a == axis or a.startswith(axis + ":") for d in spec.dims for a in d.axes)


def _shape_text(dtype: str, shape: tuple[int, ...] | None) -> str:
    return dtype if shape is None else f"{dtype}[{'x'.join(map(str, shape))}]"


def _op_label(op: Op) -> str:
    return f"call @{op.callee}" if op.callee else op.short_name


def find(
    graph: ProgramGraph,
    text: str,
    *,
    spec_of: Callable[[int], Spec | None] = lambda _vid: None,
    result: PropagationResult | None = None,
) -> FindResult:
    """Every scope, op, tensor and callee ``text`` matches (see the module docstring)."""
    # The session stays cheap to import (no numpy, no jaxlib): the program room is
    # imported when a search runs.
    from shardscope.backend.program.layout import HIDDEN_OPS

    query = parse_query(text)
    if query.empty:
        return FindResult(query, [])
    kinds = query.kinds
    terms = _Terms(query, result)
    matches: list[Match] = []
    if "scope" in kinds:
        matches += _scopes(graph, terms.named, HIDDEN_OPS)
    if "op" in kinds:
        matches += _ops(graph, terms, HIDDEN_OPS)
    if "tensor" in kinds:
        matches += _tensors(graph, terms, spec_of)
    if "callee" in kinds and query.words:
        matches += _callees(graph, terms.named)
    return FindResult(query, matches)


class _Terms:
    """A query's words and collective filters, with the propagation result's collectives
    and conflicts they are checked against."""

    def __init__(self, query: Query, result: PropagationResult | None) -> None:
        self.query = query
        self.collectives: dict[int, list[str]] = {}  # by op
        self.returned: dict[int, list[str]] = {}  # collectives on a returned tensor, by value
        self.conflicts: set[int] = set()
        if result is not None:
            for c in result.collectives:
                if c.op is not None:
                    self.collectives.setdefault(c.op, []).append(c.kind)
                elif c.value is not None:
                    self.returned.setdefault(c.value, []).append(c.kind)
            self.conflicts = {c.op for c in result.conflicts}

    def named(self, name: str) -> bool:
        """Whether ``name`` holds every word of the query."""
        name = name.lower()
        return all(w in name for w in self.query.words)

    def wanted(self, kinds_here: list[str]) -> bool:
        """Whether collectives of ``kinds_here`` satisfy every collective filter."""
        keys = set(map(_kind_key, kinds_here))
        return all(bool(keys) if k is None else k in keys for k in self.query.collectives)


def _ops(graph: ProgramGraph, terms: _Terms, hidden: frozenset[str]) -> list[Match]:
    """Ops drawn in the graph whose name matches and that pass the filters."""
    query = terms.query
    out = []
    for op in graph.ops:
        if op.name in hidden:
            continue
        label = _op_label(op)
        if query.words and not (terms.named(op.short_name) or terms.named(label)):
            continue
        kinds_here = terms.collectives.get(op.id, [])
        if query.conflict and op.id not in terms.conflicts:
            continue
        if not terms.wanted(kinds_here):
            continue
        detail = op.scope or f"@{op.function}"
        if kinds_here and query.collectives:
            detail = f"{', '.join(sorted(set(kinds_here)))} · {detail}"
        out.append(Match("op", label, detail, max(1, len(kinds_here)), op=op.id, scope=op.scope))
    return out


def _tensors(
    graph: ProgramGraph, terms: _Terms, spec_of: Callable[[int], Spec | None]
) -> list[Match]:
    """Tensors whose name matches, whose shown spec uses the query's axes and, with a
    collective filter, that a collective at the return moves."""
    query = terms.query
    out = []
    for v in graph.values:
        if v.producer is None and v.role != "arg":
            continue
        # By name alone, only named tensors (arguments, results): every other one is
        # an op's result, and the op is listed. With a filter, any tensor, by the name
        # it shows (its scope, op and number).
        if query.words and not (v.name or query.axes) or not terms.named(v.display_name or ""):
            continue
        if query.axes:
            spec = spec_of(v.id)
            if not all(_uses_axis(spec, a) for a in query.axes):
                continue
        detail = _shape_text(v.dtype, v.shape)
        if query.collectives:
            if not terms.wanted(terms.returned.get(v.id, [])):
                continue
            detail = f"{', '.join(sorted(set(terms.returned[v.id])))} at the return · {detail}"
        out.append(Match("tensor", v.display_name or v.ssa, detail, op=v.producer, value=v.id))
    return out


def _callees(graph: ProgramGraph, named: Callable[[str], bool]) -> list[Match]:
    """Called functions whose name matches, with how many call sites each has."""
    calls: dict[str, list[int]] = {}
    for op in graph.ops:
        if op.callee and op.callee in graph.functions:
            calls.setdefault(op.callee, []).append(op.id)
    out = []
    for name, sites in calls.items():
        if named(name):
            n = len(sites)
            detail = f"{n} call{'s' if n != 1 else ''}"
            out.append(Match("callee", f"@{name}", detail, n, op=sites[0], function=name))
    return out


def _scopes(
    graph: ProgramGraph, named: Callable[[str], bool], hidden: frozenset[str]
) -> list[Match]:
    """Scopes whose own name matches, with how many ops each holds (nested ones too)."""
    from shardscope.backend.natural_order import natural_key
    from shardscope.backend.program.locations import split_name_path

    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for op in graph.ops:
        if not op.scope:
            continue
        parts = split_name_path(op.scope)
        for k in range(1, len(parts) + 1):
            if not named(parts[k - 1]):
                continue
            path = "/".join(parts[:k])
            # counted as a folded scope's node counts them, constants included
            counts[path] = counts.get(path, 0) + 1
            # the op that reveals it: its first one the graph draws
            if path not in first or (
                graph.ops[first[path]].name in hidden and op.name not in hidden
            ):
                first[path] = op.id
    return [
        Match(
            "scope",
            split_name_path(path)[-1],
            path,
            n,
            op=first[path],
            scope=path,
        )
        # a tree's order, each level natural: layer_2 before layer_10
        for path, n in sorted(
            counts.items(), key=lambda kv: [natural_key(p) for p in split_name_path(kv[0])]
        )
    ]
