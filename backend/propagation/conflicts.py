"""Conflicts: ops whose operands and results propose different axes for the same factor.

Shardy resolves sharding per *factor* of an op's sharding rule (``sdy.sharding_rule``, kept
on each op by the propagation pass). After propagation each tensor of an op still holds
the axes it proposed for each factor; where two tensors hold axes that are not prefixes
of one another, Shardy had to pick, and the partitioner reshards the losers. This module
finds those factors, names the rule that decided (Shardy's own order of checks: user
priority, closed dimension, axis already used by another factor, non-divisible size,
longest common prefix, op priority) and the reshard each losing tensor needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from shardscope.backend.json_form import JsonForm, json_field
from shardscope.backend.propagation import sdyread
from shardscope.backend.propagation.timeline import Timeline
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.sharding.values import ValueSharding, axis_size, replicated

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.program.mlir import ModuleView
    from shardscope.backend.propagation.annotate import Annotation
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.propagation.program_index import ProgramIndex

LONGEST_COMMON_PREFIX = "longest common prefix"
AXIS_USED = "axis already used by another factor"
CLOSED = "closed dimension"
NON_DIVISIBLE = "non-divisible size"
USER_PRIORITY = "user priority"
OP_PRIORITY = "op priority"
_FACTOR_NAMES = "ijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class OpRule:
    """An op's factor rule with the graph ids of its operands and results."""

    op: int
    op_name: str
    operand_dims: tuple[tuple[tuple[int, ...], ...], ...]
    result_dims: tuple[tuple[tuple[int, ...], ...], ...]
    factor_sizes: tuple[int, ...]
    reduction: frozenset[int]
    need_replication: frozenset[int]
    operands: tuple[int | None, ...]
    results: tuple[int | None, ...]


@dataclass(frozen=True)
class Proposal(JsonForm):
    """What one tensor of the op holds for the factor, and where those axes came from."""

    tensor: str
    value: int | None
    axes: tuple[str, ...]
    origin: str


@dataclass(frozen=True)
class Reshard(JsonForm):
    """A tensor the partitioner must reshard: its axes for the factor become ``to_axes``.

    In JSON ``from_axes`` and ``to_axes`` are ``from`` and ``to``.
    """

    tensor: str
    value: int | None
    dims: tuple[int, ...]
    from_axes: tuple[str, ...] = json_field(key="from")
    to_axes: tuple[str, ...] = json_field(key="to")
    kind: str


@dataclass
class Conflict(JsonForm):
    """One conflicting factor of one op; its JSON form is a ``conflicts[]`` entry of
    ``propagate --json``."""

    op: int
    op_name: str
    factor: str
    factor_size: int
    dims: dict[str, list[int]]
    proposals: list[Proposal]
    kept: tuple[str, ...]
    rule: str
    reshards: list[Reshard] = field(default_factory=list)
    collectives: list[Collective] = field(default_factory=list)


def conflict_text(c: Conflict) -> str:
    """``stablehlo.add (op 1): factor i of size 16: data vs model, kept [_] by longest
    common prefix``: one conflict on one line."""
    offers = " vs ".join("+".join(p.axes) for p in c.proposals) or "nothing"
    return (
        f"{c.op_name} (op {c.op}): factor {c.factor} of size {c.factor_size}: {offers}, "
        f"kept {dims_text([c.kept])} by {c.rule}"
    )


def factor_name(i: int) -> str:
    """Shardy's factor symbol: i, j, ... z, then z_1, z_2, ..."""
    return _FACTOR_NAMES[i] if i < len(_FACTOR_NAMES) else f"z_{i - len(_FACTOR_NAMES) + 1}"


def read_rules(
    module: ir.Module | ModuleView, index: ProgramIndex, scan: sdyread.Scan | None = None
) -> list[OpRule]:
    """The ``sdy.sharding_rule`` of every program op of a propagated module.

    ``scan``: a ``sdyread.Scan`` of ``module`` as it stands, if the caller has one.
    """
    scan = scan or sdyread.Scan(module.operation)
    out = []
    n_ops = len(index.graph.ops)
    graph_id, key_of, key_to_id = index.graph_id, scan.value_key, index.key_to_id
    for op, tag in zip(scan.ops, scan.tags, strict=True):
        if tag is None or tag < 0 or tag >= n_ops:
            continue
        rule_attr = op.attributes.get("sdy.sharding_rule")
        if rule_attr is None:
            continue
        operands, results, sizes, reduction, need_rep = sdyread.cached(rule_attr, _read_rule)
        out.append(
            OpRule(
                tag,
                op.name,
                operands,
                results,
                sizes,
                reduction,
                need_rep,
                tuple([graph_id(key_of(v)) for v in op.operands]),
                # ``resolve`` only renames block-argument keys, so results look up directly.
                tuple([key_to_id.get(("res", tag, j)) for j in range(len(op.results))]),
            )
        )
    return out


def _read_rule(attr: ir.Attribute) -> tuple:
    rule = sdy.OpShardingRuleAttr(attr)
    return (
        tuple(_mapping(m) for m in rule.operand_mappings),
        tuple(_mapping(m) for m in rule.result_mappings),
        tuple(int(s) for s in rule.factor_sizes),
        frozenset(int(f) for f in rule.reduction_factors),
        frozenset(int(f) for f in rule.need_replication_factors),
    )


def _mapping(attr: ir.Attribute) -> tuple[tuple[int, ...], ...]:
    tm = sdy.TensorMappingAttr(attr)
    return tuple(
        tuple(int(f) for f in sdy.DimMappingAttr(d).factor_indices) for d in tm.dim_mappings
    )


def factor_axes(
    dims: tuple[tuple[int, ...], ...],
    sharding: ValueSharding,
    mesh: dict[str, int],
    sizes: tuple[int, ...],
) -> dict[int, tuple[tuple[str, ...], tuple[int, ...], bool]]:
    """Per factor: the axes a tensor holds for it, the dims it covers, and if one is closed.

    A dimension made of several factors (a reshape's ``[ij]``) gives its major axes to its
    major factors while they divide the factor size, the rest to the minor-most one, as
    Shardy's projection does.
    """
    out: dict[int, tuple[tuple[str, ...], tuple[int, ...], bool]] = {}
    for d, factors in enumerate(dims):
        axes = list(sharding.dims[d]) if d < len(sharding.dims) else []
        closed = sharding.closed[d] if d < len(sharding.closed) else False
        for n, f in enumerate(factors):
            taken: list[str] = []
            if n == len(factors) - 1:
                taken, axes = axes, []
            else:
                size = sizes[f]
                prod = 1
                while axes and size % (prod * axis_size(axes[0], mesh)) == 0:
                    prod *= axis_size(axes[0], mesh)
                    taken.append(axes.pop(0))
            prev = out.get(f, ((), (), False))
            out[f] = (prev[0] + tuple(taken), prev[1] + (d,), prev[2] or closed)
    return out


def _compatible(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _lcp(seqs: list[tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for group in zip(*seqs, strict=False):
        if len(set(group)) != 1:
            break
        out.append(group[0])
    return tuple(out)


def _reshard_kind(src: tuple[str, ...], dst: tuple[str, ...], moved_elsewhere: bool) -> str:
    if moved_elsewhere:
        return "all_to_all"
    if src[: len(dst)] == dst:
        return "all_gather"
    if dst[: len(src)] == src:
        return "all_slice"
    return "all_gather+all_slice"


def find_conflicts(
    rules: list[OpRule],
    index: ProgramIndex,
    graph: ProgramGraph,
    timeline: Timeline,
    mesh: Mesh,
    annotations: list[Annotation],
) -> list[Conflict]:
    """Every factor of every op where the op's tensors hold incompatible axes."""
    shape = mesh.shape
    priorities = _priorities(annotations)
    out: list[Conflict] = []
    # Whether an op conflicts depends only on its rule and its tensors' shardings, and a
    # layered model repeats the same few combinations thousands of times: each is
    # projected onto factors once, and combinations found clean are not looked at again.
    projected: dict[tuple, dict] = {}
    clean: set[tuple] = set()
    for rule in rules:
        tensors = [
            (f"operand-{i}", v, d)
            for i, (v, d) in enumerate(zip(rule.operands, rule.operand_dims, strict=False))
        ]
        tensors += [
            (f"result-{j}", v, d)
            for j, (v, d) in enumerate(zip(rule.results, rule.result_dims, strict=False))
        ]
        per_tensor = []
        key: list = [rule.factor_sizes]
        for label, v, dims in tensors:
            if v is None or not dims:
                continue
            # A value Shardy left without any sharding is open and replicated.
            sh = timeline.final.get(v) or replicated(len(dims))
            fkey = (dims, sh, rule.factor_sizes)
            fa = projected.get(fkey)
            if fa is None:
                fa = projected[fkey] = factor_axes(dims, sh, shape, rule.factor_sizes)
            per_tensor.append((label, v, dims, fa))
            key.append((label, fkey))
        if len(per_tensor) < 2:
            continue
        combo = tuple(key)
        if combo in clean:
            continue
        found = len(out)
        seen: set[int] = set()
        for f in range(len(rule.factor_sizes)):
            holders = [(label, v, fa[f]) for label, v, _, fa in per_tensor if f in fa]
            props = [(label, v, info) for label, v, info in holders if info[0]]
            distinct = {info[0] for _, _, info in props}
            if len(distinct) < 2:
                continue
            seqs = sorted(distinct)
            if all(_compatible(a, b) for a in seqs for b in seqs):
                continue
            out.append(_explain(rule, f, holders, props, per_tensor, timeline, shape, priorities))
            seen.add(f)
        out.extend(_cross_factor(rule, per_tensor, seen, timeline, shape, priorities))
        if len(out) == found:
            clean.add(combo)
    return out


def _cross_factor(
    rule: OpRule,
    per_tensor,
    seen: set[int],
    timeline: Timeline,
    mesh: dict[str, int],
    priorities: dict[int, int],
) -> list[Conflict]:
    """One axis held on two different factors by two tensors: the factor that lost it."""
    where: dict[str, set[int]] = {}
    for _, _, _, fa in per_tensor:
        for g, info in fa.items():
            for a in info[0]:
                where.setdefault(a, set()).add(g)
    out = []
    for axis, factors in sorted(where.items()):
        if len(factors) < 2:
            continue
        kept_by = {
            g
            for label, _, _, fa in per_tensor
            if label.startswith("result")
            for g, info in fa.items()
            if axis in info[0]
        }
        for f in sorted(factors - kept_by):
            if f in seen:
                continue
            seen.add(f)
            holders = [(label, v, fa[f]) for label, v, _, fa in per_tensor if f in fa]
            props = [(label, v, info) for label, v, info in holders if info[0]]
            c = _explain(
                rule, f, holders, props, per_tensor, timeline, mesh, priorities, frozenset({axis})
            )
            if c.rule != USER_PRIORITY:
                c.rule = AXIS_USED
            out.append(c)
    return out


def _priorities(annotations: list[Annotation]) -> dict[int, int]:
    out = {}
    for a in annotations:
        prios = [d.priority for d in a.spec.dims if d.priority is not None]
        if a.value is not None and prios:
            out[a.value] = min(prios)
    return out


def _explain(
    rule: OpRule,
    f: int,
    holders,
    props,
    per_tensor,
    timeline: Timeline,
    mesh: dict[str, int],
    priorities: dict[int, int],
    exclude: frozenset[str] = frozenset(),
) -> Conflict:
    results = [h for h in holders if h[0].startswith("result")]
    if results:
        kept = results[0][2][0]
    else:
        kept = _lcp([info[0] for _, _, info in props])
    if exclude:
        cut = next((i for i, a in enumerate(kept) if a in exclude), len(kept))
        kept = kept[:cut]
    proposals = []
    for label, v, info in props:
        origins = timeline.origins.get(v, {}) if v is not None else {}
        origin = ", ".join(sorted({origins.get(a, "") for a in info[0]} - {""})) or "unknown"
        proposals.append(Proposal(label, v, info[0], origin))
    lcp = _lcp([info[0] for _, _, info in props])
    size = rule.factor_sizes[f]
    used_elsewhere = set()
    for label, _, _, fa in per_tensor:
        if results and label != results[0][0]:
            continue
        for g, info in fa.items():
            if g != f:
                used_elsewhere.update(info[0])
    if any(v in priorities for _, v, _ in props):
        rule_name = USER_PRIORITY
    elif results and results[0][2][2] and kept and any(kept != info[0] for _, _, info in props):
        rule_name = CLOSED
    elif any(set(info[0]) & used_elsewhere for _, _, info in props if info[0] != kept):
        rule_name = AXIS_USED
    elif any(size % math.prod(axis_size(a, mesh) for a in info[0]) for _, _, info in props):
        rule_name = NON_DIVISIBLE
    elif kept == lcp:
        rule_name = LONGEST_COMMON_PREFIX
    else:
        rule_name = OP_PRIORITY
    target_other: set[str] = set()
    if results:
        for g, info in _factors_of(per_tensor, results[0][0]).items():
            if g != f:
                target_other.update(info[0])
    reshards = []
    for label, v, info in holders:
        if info[0] == kept:
            continue
        moved = bool((set(info[0]) - set(kept)) & target_other)
        reshards.append(
            Reshard(label, v, info[1], info[0], kept, _reshard_kind(info[0], kept, moved))
        )
    dims = {label: list(info[1]) for label, _, info in holders}
    return Conflict(
        rule.op, rule.op_name, factor_name(f), size, dims, proposals, kept, rule_name, reshards
    )


def _factors_of(per_tensor, label: str) -> dict:
    for lab, _, _, fa in per_tensor:
        if lab == label:
            return fa
    return {}


def settling_steps(
    conflicts: list[Conflict], timeline: Timeline, graph: ProgramGraph
) -> dict[int, list[int]]:
    """For each step index, the conflicts (indices into ``conflicts``) settled there: the
    last step across the conflict's op, or, when no axis crossed the op, the last step that
    moved an axis into or out of one of its operands or results (after it, nothing the
    decision depends on changes). A conflict no step touches has none."""
    last_at_op: dict[int, int] = {}
    last_at_value: dict[int, int] = {}
    for step in timeline.steps:
        if step.op is not None:
            last_at_op[step.op] = max(last_at_op.get(step.op, -1), step.index)
        touched = list(step.values)
        if step.source_value is not None:
            touched.append(step.source_value)
        for v in touched:
            last_at_value[v] = max(last_at_value.get(v, -1), step.index)
    settled: dict[int, list[int]] = {}
    for i, conflict in enumerate(conflicts):
        index = last_at_op.get(conflict.op)
        if index is None and 0 <= conflict.op < len(graph.ops):
            op = graph.ops[conflict.op]
            touched = [last_at_value[v] for v in (*op.operands, *op.results) if v in last_at_value]
            index = max(touched) if touched else None
        if index is not None:
            settled.setdefault(index, []).append(i)
    return settled
