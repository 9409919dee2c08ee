"""Why each compiled collective is there, which op holds it, how often one call runs it.

``explain(result, compiled, report)`` fills, on each compiled collective:

- ``cause`` (a ``CollectiveCause``): for one the partitioner inserted, the tensor it
  moves (an operand or result of the program op its metadata names), the sharding that
  tensor had after propagation and the one its consumer needs, and why they differ: a
  conflict of ``result.conflicts`` on that op whose axes it resolves (``conflict``), a
  sharding constraint or reshard (``reshard``), the op's own sharding rule (``rule``: a
  contracting or reduced dimension sharded, a dimension the op needs whole), or
  ``unknown``. ``needed`` is the sharding Shardy's matched prediction writes after its
  collective where one matched; otherwise it is read from the instruction: an
  all-gather's ``dimensions=`` loses the axes of its device groups, an all-reduce or
  reduce-scatter sums partial results over axes a dimension of an operand held and the
  op's results do not, an all-to-all moves its axes to the dimension the result holds
  them on. For one the user wrote inside ``shard_map`` (psum, all_gather, psum_scatter,
  ppermute): ``kind="user"`` and the user's line.
- ``holder``: the top-level program op around the op it serves, where that op sits in a
  loop body, a checkpoint, a ``shard_map``, a nested jit or a callee (a callee's op goes
  to the call site that the HLO op name names, else the first call, as
  ``propagation.readback`` attributes a callee's ops to its first call).
- ``runs_per_call``: the product of the known trip counts of the while loops around its
  HLO computation (``hlo.hlo_collectives``).

XLA's warnings of the compile go on their program ops too (``run.op_warnings``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shardscope.backend.run.cause_words import VERBS, conflict_text, rule_text, where_text
from shardscope.backend.run.compiled_shardings import CompiledShardings
from shardscope.backend.run.moved_tensor import Found, MoveFinder
from shardscope.backend.run.op_index import OpIndex
from shardscope.backend.run.op_warnings import op_warnings
from shardscope.backend.run.result import (
    CollectiveCause,
    CollectiveTensor,
    CompiledCollective,
    OpWarning,
)
from shardscope.backend.sharding.device_groups import spanned_axes
from shardscope.backend.sharding.spec import dims_text
from shardscope.backend.sharding.values import merge_full_axes

if TYPE_CHECKING:
    from shardscope.backend.program.graph import Op, ProgramGraph
    from shardscope.backend.propagation.result import PropagationResult

Dims = tuple[tuple[str, ...], ...]

# What the user wrote inside shard_map, by the HLO collective it compiles to.
_USER_WORDS = {
    "all-reduce": "psum",
    "all-gather": "all_gather",
    "reduce-scatter": "psum_scatter",
    "collective-permute": "ppermute",
    "all-to-all": "all_to_all",
}
# Program ops that are collectives the user wrote (inside shard_map).
USER_OPS = {
    "stablehlo.all_reduce",
    "stablehlo.all_gather",
    "stablehlo.reduce_scatter",
    "stablehlo.all_to_all",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
}
# Program ops whose job is to give a value another sharding.
_RESHARD_OPS = {"sdy.sharding_constraint", "sdy.reshard"}


def explain(
    result: PropagationResult, compiled: Sequence[CompiledCollective], report: dict
) -> tuple[list[CompiledCollective], list[OpWarning]]:
    """``compiled`` with each collective's cause, holder and runs per call filled in, and
    XLA's warnings of the compile on their program ops, from the compile worker's
    ``report``."""
    records = {r["name"]: r for r in report.get("collectives", [])}
    why = _Explainer(result, report.get("hlo_text", ""))
    out = []
    for c in compiled:
        record = records.get(c.name, {})
        tensors = why.tensors(c, record)
        cause = why.summary(c, tensors, record)
        origins = {t.origin for t in tensors if t.origin}
        out.append(
            replace(
                c,
                tensors=tensors,
                cause=cause,
                origin=("mixed" if len(origins) > 1 else origins.pop()) if origins else c.origin,
                holder=why.holder(c, cause.op, record.get("loops", [])),
                runs_per_call=int(record.get("runs_per_call", 1)),
            )
        )
    return out, op_warnings(result, report.get("xla_warnings", []), report)


def direction(op_name: str) -> str:
    """``backward`` for an op of a gradient's transpose (its HLO op name holds
    ``transpose(``, as JAX names the ops of a VJP: ``jit(f)/transpose(jvp())/dot_general``),
    else ``forward``."""
    return "backward" if "transpose(" in op_name else "forward"


def spec_text(dims: Dims | None) -> str:
    """``[data, _]``: axes per dimension, ``_`` for a replicated one; ``[?]`` unknown."""
    return dims_text(dims, "[?]")


class _Explainer:
    def __init__(self, result: PropagationResult, hlo_text: str = "") -> None:
        self.result = result
        self.hlo_text = hlo_text
        self._hlo_op_names: dict[str, str] | None = None
        self.graph: ProgramGraph = result.graph
        self.mesh = result.mesh.shape
        self.ops = OpIndex(self.graph)
        self.ways = MoveFinder(self.graph, self.result.conflicts)
        self.compiled = CompiledShardings(hlo_text, self.graph, dict(self.mesh), self.ops.find)
        self.by_name: dict[tuple[str, int | None], list[int]] = {}
        for op in self.graph.ops:
            if op.location_name:
                self.by_name.setdefault((op.location_name, op.source_line), []).append(op.id)
        self.callers: dict[str, list[int]] = {}
        for op in self.graph.ops:
            if op.callee:
                self.callers.setdefault(op.callee, []).append(op.id)
        publics = [name for name, f in self.graph.functions.items() if f.public]
        self.entry = "main" if "main" in self.graph.functions else (publics or [""])[0]

    # -- sharding of values ---------------------------------------------------------------
    def dims(self, value: int) -> Dims:
        return tuple(tuple(d) for d in self.result.values[value].spec)

    def name(self, value: int) -> str:
        return self.graph.values[value].display_name

    # -- the holder -----------------------------------------------------------------------
    def top(self, op_id: int, op_name: str = "") -> int | None:
        """The op of the entry function that is or holds op ``op_id``."""
        seen: set[int] = set()
        current: int | None = op_id
        while current is not None and current not in seen:
            seen.add(current)
            op = self.graph.ops[current]
            if op.parent is not None:
                current = op.parent
                continue
            if op.function == self.entry:
                return current
            current = self._call_site(op.function, op_name)
        return None

    def _call_site(self, function: str, op_name: str) -> int | None:
        sites = self.callers.get(function, [])
        for site in sites:
            name = self.graph.ops[site].location_name or ""
            if name and f"/{name.rsplit('/', 1)[-1]}/" in f"/{op_name}/":
                return site
        return sites[0] if sites else None

    def holder(self, c: CompiledCollective, op: int | None, loops: list[dict]) -> int | None:
        """The top-level op around ``op`` (the one the cause names, else the first
        tensor's), else around the outermost loop."""
        op = op if op is not None else self._first_op(c)
        if op is not None:
            top = self.top(op, c.tensors[0].op_name if c.tensors else c.source)
            return top if top != op else None
        if loops:
            found = self.ops.find(loops[0].get("op_name", ""), loops[0].get("line"))
            return self.top(found) if found is not None else None
        return None

    def _first_op(self, c: CompiledCollective) -> int | None:
        return next((t.op for t in c.tensors if t.op is not None), None)

    # -- the cause ------------------------------------------------------------------------
    def tensors(self, c: CompiledCollective, record: dict) -> tuple[CollectiveTensor, ...]:
        """``c``'s operands, each with its origin, direction and own cause."""
        out = []
        for j, t in enumerate(c.tensors):
            user = t.op is not None and self.graph.ops[t.op].name in USER_OPS
            origin = ("user" if user else "partitioner") if t.op is not None else c.origin
            t = replace(t, origin=origin, direction=direction(t.op_name))
            out.append(replace(t, cause=self.cause(c, record, j, t)))
        return tuple(out)

    def summary(
        self, c: CompiledCollective, tensors: tuple[CollectiveTensor, ...], record: dict
    ) -> CollectiveCause:
        """The collective's cause: its one operand's; for a combined collective whose
        operands have causes of their own, each operand's in turn."""
        causes = [t.cause for t in tensors if t.cause is not None]
        if not causes:
            return self.cause(c, record, None, None)
        if len({x.text for x in causes}) == 1:
            return causes[0]
        parts = "; ".join(
            f"[{j}] {x.text}" + (f" ({tensors[j].origin})" if tensors[j].origin else "")
            for j, x in enumerate(causes)
        )
        first = causes[0]
        return CollectiveCause(
            "combined",
            f"XLA combined {len(causes)} {c.kind}s into one: {parts}",
            op=first.op,
            line=first.line,
            file=first.file,
            direction=first.direction,
        )

    def cause(
        self, c: CompiledCollective, record: dict, j: int | None, t: CollectiveTensor | None
    ) -> CollectiveCause:
        """Why operand ``j`` (``t``) of ``c`` is moved; ``j`` None: ``c`` as a whole."""
        if (t.origin if t is not None else c.origin) == "user":
            return self._user(c, t)
        dimensions = record.get("dimensions", [])
        axes = set(c.axes or ())
        part = False
        if not axes and c.device_groups:
            # Groups that span no whole mesh axis: the axes they span part of.
            axes = set(spanned_axes(self.result.mesh, c.device_groups))
            part = bool(axes)
        way = direction(t.op_name if t is not None else c.source)
        candidates = self._candidates(c, j)
        op_id, found = self._search(c.kind, candidates, axes, dimensions, self.dims)
        compiled = False
        if found is None:
            inputs = record.get("inputs", [])
            chain = self._chain(inputs[j] if j is not None and j < len(inputs) else None)
            ops = [*(o for o, _ in candidates), *(o for o in chain if o not in dict(candidates))]
            hit, found = self._search(
                c.kind, [(o, None) for o in ops], axes, dimensions, self._compiled_dims(axes)
            )
            compiled = found is not None
            op_id = hit if found is not None else op_id
        if op_id is None:
            op_id, found = self._from_argument(c, record.get("inputs", []), dimensions)
        line, file = self._line(c, op_id)
        if op_id is None:
            return CollectiveCause(
                "unknown",
                f"{c.kind} over {'+'.join(sorted(axes)) or '?'} for {c.source or 'an op'}: no "
                f"program op of that name is in the program, so its cause is not known",
                line=line,
                file=file,
                direction=way,
            )
        op = self.graph.ops[op_id]
        where = where_text(op.short_name, line, way)
        if found is None:
            return CollectiveCause(
                "unknown",
                f"{c.kind} over {'+'.join(sorted(axes)) or '?'} for {where}: "
                f"{self._examined(op, axes)}",
                op=op_id,
                line=line,
                file=file,
                direction=way,
            )
        return self._found(c, op, found, axes, where, line, file, way, compiled, part)

    def _found(
        self,
        c: CompiledCollective,
        op: Op,
        found: Found,
        axes: set[str],
        where: str,
        line: int | None,
        file: str,
        way: str,
        compiled: bool,
        part: bool = False,
    ) -> CollectiveCause:
        moved = set(axes) or {a for d in found.had for a in d} - {
            a for d in found.needed for a in d
        }
        conflict = self._conflict(op.id, found.value, moved)
        if conflict is not None:
            kind = "conflict"
            reason = conflict_text(self.result.conflicts, conflict)
        elif op.name in _RESHARD_OPS:
            kind = "reshard"
            reason = f"the sharding constraint asks for {spec_text(found.needed)}"
        else:
            # A shift or a selection is its own kind; any other way is the op's rule.
            kind = found.how if found.how in ("shift", "select") else "rule"
            reason = rule_text(self.graph, op, found, moved, compiled)
        tensor = self.name(found.value)
        propagated = self.dims(found.value)
        shown = spec_text(found.had)
        if compiled and propagated != found.had:
            shown = f"(propagation: {spec_text(propagated)}; compiled: {spec_text(found.had)})"
        verb = VERBS.get(c.kind, c.kind)
        over = "+".join(sorted(moved))
        if part:
            over = f"part of {over} (device groups {c.groups_text or c.device_groups})"
        text = f"{tensor} {shown} is {verb} over {over} for {where}: {reason}"
        return CollectiveCause(
            kind,
            text,
            tensor=tensor,
            value=found.value,
            op=op.id,
            had=found.had,
            needed=found.needed,
            conflict=conflict,
            provenance=found.value if any(propagated) else None,
            line=line,
            file=file,
            direction=way,
            compiled=found.had if compiled and propagated != found.had else None,
        )

    def _examined(self, op: Op, axes: set[str]) -> str:
        """What was looked at, for a collective whose cause is not found: each tensor of
        the op with propagation's and the compiled sharding."""
        seen = []
        for v in (*op.operands, *op.results)[:6]:
            compiled = self.compiled.of_value(v, self.dims(v), sorted(axes))
            text = f"{self.name(v)} propagation {spec_text(self.dims(v))}"
            text += f", compiled {spec_text(compiled)}" if compiled is not None else ""
            seen.append(text)
        return (
            f"examined {op.short_name}'s tensors ({'; '.join(seen) or 'none'}) and the "
            f"instructions that produced its operand: none holds "
            f"{'+'.join(sorted(axes)) or 'its axes'} where the op changes it"
        )

    def _candidates(self, c: CompiledCollective, j: int | None) -> list[tuple[int, object]]:
        """Program ops that may be the one operand ``j`` serves (each tensor's op and its
        namesakes, and the op of the prediction matched with it), with that prediction."""
        out: list[tuple[int, object]] = []
        pairs = list(enumerate(c.tensors)) if j is None else [(j, c.tensors[j])]
        for k, t in pairs:
            ops = self._namesakes(t.op) if t.op is not None else []
            ref = self._ref_for(c, k, t.op)
            if ref is not None and ref.op is not None and ref.op not in ops:
                # The op name may name another op of the same name (a constant).
                ops.append(ref.op)
            out.extend((o, ref) for o in ops if o not in dict(out))
        return out

    def _search(
        self,
        kind: str,
        candidates: list[tuple[int, object]],
        axes: set[str],
        dimensions: list[int],
        dims: Callable[[int], Dims],
    ) -> tuple[int | None, Found | None]:
        """The first candidate op a way below explains, with what it found; else the
        first op and None."""
        first: int | None = None
        for op_id, ref in candidates:
            first = op_id if first is None else first
            op = self.graph.ops[op_id]
            found = None
            if ref is not None and dims == self.dims:
                found = self._from_prediction(kind, ref, op, axes)
            found = found or self.ways.derive(kind, op, axes, dimensions, dims)
            if found is not None:
                return op_id, found
        return first, None

    def _chain(self, instruction: str | None) -> list[int]:
        """The program ops of the instructions that produced the collective's operand."""
        if not instruction or not self.hlo_text:
            return []
        return self.compiled.producer_ops(instruction)

    def _compiled_dims(self, axes: set[str]) -> Callable[[int], Dims]:
        hint = sorted(axes)

        def dims(value: int) -> Dims:
            own = self.dims(value)
            return self.compiled.of_value(value, own, hint) or own

        return dims

    def _line(self, c: CompiledCollective, op_id: int | None) -> tuple[int | None, str]:
        for t in c.tensors:
            if t.op == op_id and t.line is not None:
                return t.line, t.file
        if op_id is not None and self.graph.ops[op_id].source_line is not None:
            op = self.graph.ops[op_id]
            return op.source_line, op.source_file or ""
        return c.line, c.file

    def _user(self, c: CompiledCollective, t: CollectiveTensor | None) -> CollectiveCause:
        t = t if t is not None else (c.tensors[0] if c.tensors else None)
        op_id = t.op if t is not None else None
        value = None
        if op_id is not None and self.graph.ops[op_id].operands:
            value = self.graph.ops[op_id].operands[0]
        line = t.line if t is not None else c.line
        file = t.file if t is not None else c.file
        word = _USER_WORDS.get(c.kind, c.kind)
        axes = "+".join(c.axes or ()) or "its axes"
        way = direction(t.op_name if t is not None else c.source)
        at = f" at line {line}" if line is not None else ""
        at += " (backward: the transpose of the user's collective)" if way == "backward" else ""
        what = f" of {self.name(value)}" if value is not None else ""
        return CollectiveCause(
            "user",
            f"the {word}{what} over {axes} in a shard_map body{at}",
            tensor=self.name(value) if value is not None else "",
            value=value,
            op=op_id,
            line=line,
            file=file,
            direction=way,
        )

    def _from_argument(
        self, c: CompiledCollective, inputs: list[str], dimensions: list[int]
    ) -> tuple[int | None, Found | None]:
        """Where no op is found by name: an argument the collective reads (an HLO
        parameter, whose metadata names the argument) and, of its users, the op whose
        name ends as the collective's op name does, else its first."""
        if self._hlo_op_names is None:
            from shardscope.backend.run.xla_log import instruction_op_names

            self._hlo_op_names = instruction_op_names(self.hlo_text.splitlines())
        leaf = c.source.rsplit("/", 1)[-1]
        for name in inputs:
            value = self.graph.value_by_name(self._hlo_op_names.get(name, ""))
            if value is None or not value.users:
                continue
            users = [self.graph.ops[u] for u in value.users]
            same = [
                o for o in users if leaf and (o.location_name or "").split(":")[0].endswith(leaf)
            ]
            op = (same or users)[0]
            return op.id, self.ways.derive(c.kind, op, set(c.axes or ()), dimensions, self.dims)
        return None, None

    def _namesakes(self, op_id: int) -> list[int]:
        """``op_id`` first, then the ops of the same name and line: an HLO op name names
        one of them (a matmul and its transpose in a backward pass share both)."""
        op = self.graph.ops[op_id]
        same = self.by_name.get((op.location_name or "", op.source_line), [])
        return [op_id, *(i for i in same if i != op_id)]

    def _ref_for(self, c: CompiledCollective, j: int, op: int | None):
        if len(c.predicted) == len(c.tensors) and j < len(c.predicted):
            return c.predicted[j]
        return next((p for p in c.predicted if p.op == op), None)

    def _from_prediction(self, kind: str, ref, op: Op, axes: set[str]) -> Found | None:
        """Shardy's prediction, where it moves a program value whose sharding it changes
        on the compiled collective's axes (a reduction's prediction names the partial
        result, whose sharding it keeps: that one is derived instead). Shardy ran on the
        module with calls inlined: a value outside the op's body (a loop's block argument
        where the op sits in a callee) stands for the op's operand of the same sharding."""
        if ref.index is None or kind in ("all-reduce", "reduce-scatter"):
            return None
        predicted = self.result.collectives[ref.index]
        if predicted.value is None:
            return None
        had = self.dims(predicted.value)
        needed = tuple(tuple(merge_full_axes(d, self.mesh)) for d in predicted.out_spec)
        if len(needed) != len(had) or needed == had:
            return None
        held = {a for d in had for a in d}
        if axes and not axes <= held:
            return None
        changed = [i for i, (a, b) in enumerate(zip(had, needed, strict=True)) if a != b]
        dim = changed[0] if len(changed) == 1 else None
        value = predicted.value
        if value not in (*op.operands, *op.results):
            value = next((v for v in op.operands if self.dims(v) == had), value)
        return Found(value, had, needed, dim, "predicted")

    # -- conflicts and rules --------------------------------------------------------------
    def _conflict(self, op_id: int, value: int, axes: set[str]) -> int | None:
        """The conflict on ``op_id`` whose axes the collective resolves: one that names
        ``value`` with those axes first, else one of the op's with those axes."""
        mine = [(i, c) for i, c in enumerate(self.result.conflicts) if c.op == op_id]
        for i, c in mine:
            for p in c.proposals:
                if p.value == value and axes & set(p.axes):
                    return i
            for r in c.reshards:
                if r.value == value and axes & set(r.from_axes):
                    return i
        for i, c in mine:
            if any(axes & set(p.axes) for p in c.proposals):
                return i
        return None
