"""``Analysis``: one program's propagation and the records of the steps after it.

Each step returns a frozen record of its own: propagation a ``PropagationResult``, the
XLA compile a ``Compiled`` (or ``NotCompiled``), the host layout a ``HostTraffic``, the
pricing a ``Pricing``, the GSPMD comparison a ``GspmdComparison``. ``Analysis`` holds them
side by side, answers the questions that need several of them (the compiled collectives
as laid over the hosts, every warning in order), and ``to_json`` is the object
``propagate --json`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from shardscope.backend.run.result import Compiled, NotCompiled

# The records are only named here: importing their modules would load jaxlib with the
# session, which shows a window before any program is loaded.
if TYPE_CHECKING:
    from shardscope.backend.cost.price import Pricing
    from shardscope.backend.cost.traffic import HostTraffic
    from shardscope.backend.gspmd.compare import Difference, GspmdComparison
    from shardscope.backend.propagation.result import PropagationResult, ValueInfo
    from shardscope.backend.run.result import CompiledCollective, CompileOutcome, OpWarning


def _of_propagation(name: str, doc: str) -> Any:
    """A read-only attribute of ``Analysis`` that is its propagation's ``name``."""
    return property(lambda self: getattr(self.propagation, name), doc=doc)


@dataclass(frozen=True)
class Analysis:
    """One program's propagation with what the later steps made of it; a step not taken
    (or not finished) is None."""

    propagation: PropagationResult
    compile: CompileOutcome | None = None
    traffic: HostTraffic | None = None
    pricing: Pricing | None = None
    gspmd: GspmdComparison | None = None

    def with_parts(self, **parts: Any) -> Analysis:
        """This analysis with some parts replaced (``compile=``, ``traffic=``, ...)."""
        return replace(self, **parts)

    # -- propagation's own, read through (``PropagationResult`` documents each) ----------
    program = _of_propagation("program", "The program's name.")
    mesh = _of_propagation("mesh", "The mesh it was propagated on.")
    graph = _of_propagation("graph", "The program graph.")
    framework = _of_propagation("framework", "The framework that built the program.")
    partitioner = _of_propagation("partitioner", "The partitioner that framework uses.")
    sharded_by = _of_propagation("sharded_by", "How the script sharded each argument.")
    route = _of_propagation("route", "The propagation pipeline that ran.")
    annotations = _of_propagation("annotations", "The shardings written before propagation.")
    values = _of_propagation("values", "Every value with its final sharding.")
    timeline = _of_propagation("timeline", "Propagation's steps.")
    conflicts = _of_propagation("conflicts", "The conflicts propagation settled.")
    collectives = _of_propagation("collectives", "Shardy's predicted collectives.")

    def value(self, ref: int | str) -> ValueInfo:
        """A value by graph id or user-visible name."""
        return self.propagation.value(ref)

    # -- the compile's ------------------------------------------------------------------
    @property
    def compiled(self) -> Compiled | None:
        """What XLA compiled; None where it was not compiled (yet)."""
        return self.compile if isinstance(self.compile, Compiled) else None

    @property
    def compile_error(self) -> str | None:
        """Why the compile failed (one line), where it did."""
        failed = isinstance(self.compile, NotCompiled) and self.compile.failed
        return self.compile.reason if failed else None  # type: ignore[union-attr]

    @cached_property
    def compiled_shardings(self) -> dict[int, tuple[tuple[str, ...], ...]]:
        """Values XLA compiled with another sharding than propagation's, as a compiled
        collective's cause found them (``CollectiveCause.compiled``): value id -> axes per
        dimension. Empty before the compile, or where every value kept its sharding."""
        out: dict[int, tuple[tuple[str, ...], ...]] = {}
        for c in self.compiled.collectives if self.compiled is not None else ():
            for cause in (c.cause, *(t.cause for t in c.tensors)):
                if cause is not None and cause.compiled is not None and cause.value is not None:
                    out.setdefault(cause.value, cause.compiled)
        return out

    @cached_property
    def compiled_collectives(self) -> tuple[CompiledCollective, ...] | None:
        """The compiled collectives, each saying whether it crosses hosts where the
        analysis is laid over several; None where the program was not compiled."""
        if self.compiled is None:
            return None
        crossing = None if self.traffic is None else self.traffic.compiled_crossing
        if crossing is None:
            return self.compiled.collectives
        return tuple(
            replace(c, crosses_hosts=x)
            for c, x in zip(self.compiled.collectives, crossing, strict=True)
        )

    @property
    def predicted_matched(self) -> tuple[bool | None, ...] | None:
        """Whether a compiled collective matched each predicted one; None uncompiled."""
        return None if self.compiled is None else self.compiled.predicted_matched

    @property
    def memory(self) -> dict | None:
        """XLA's memory analysis of the compile, where it recorded one."""
        return None if self.compiled is None else self.compiled.memory

    @property
    def xla_warnings(self) -> tuple[OpWarning, ...] | None:
        """XLA's warnings of the compile on their ops; None uncompiled."""
        return None if self.compiled is None else self.compiled.xla_warnings

    @property
    def compiled_by(self) -> str | None:
        """Who compiled the collectives: "shardscope", or the program's framework."""
        return None if self.compiled is None else self.compiled.compiled_by

    # -- the host layout's and the comparison's -------------------------------------------
    @property
    def hosts(self) -> int:
        """The hosts the mesh is laid over."""
        return 1 if self.traffic is None else self.traffic.hosts

    @property
    def predicted_crossing(self) -> tuple[bool | None, ...] | None:
        """Whether each predicted collective would cross hosts; None on one host."""
        return None if self.traffic is None else self.traffic.predicted_crossing

    @property
    def gspmd_differences(self) -> list[Difference] | None:
        """The values GSPMD shards otherwise; None without a comparison."""
        return None if self.gspmd is None else self.gspmd.differences

    @property
    def gspmd_collectives(self) -> list[CompiledCollective] | None:
        """GSPMD's compiled collectives; None without a comparison."""
        return None if self.gspmd is None else self.gspmd.collectives

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every step's warnings, in the order the steps ran."""
        parts = (self.compile, self.traffic, self.gspmd)
        return (
            *self.propagation.warnings,
            *(w for part in parts if part is not None for w in part.warnings),
        )

    # -- the JSON -----------------------------------------------------------------------
    def _predicted_json(self) -> list[dict]:
        """Shardy's predicted collectives, each with ``matched``: whether a compiled
        collective matched it (null: not compiled, or an all-slice); with hosts,
        ``crosses_hosts``: whether its device groups cross hosts."""
        predicted = self.propagation.collectives
        matched = self.predicted_matched or (None,) * len(predicted)
        out = [{**c.to_json(), "matched": m} for c, m in zip(predicted, matched, strict=True)]
        if self.predicted_crossing is not None:
            for entry, crosses in zip(out, self.predicted_crossing, strict=True):
                entry["crosses_hosts"] = crosses
        return out

    def to_json(self) -> dict:
        """The object ``propagate --json`` prints."""
        own = self.propagation.to_json()
        compiled = self.compiled_collectives
        xla_warnings = self.xla_warnings
        out: dict[str, Any] = {
            **{k: own[k] for k in ("program", "framework", "partitioner", "mesh")},
            "device_order": own["device_order"],
            # How the script sharded each argument it sharded, by argument name (a
            # torch_xla capture: "FSDPv2 (its parameters) at train.py:78").
            "sharded_by": dict(self.sharded_by),
            # The hosts the devices are laid over, device numbers k*N/H.. on host k.
            "hosts": self.hosts,
            **{k: own[k] for k in ("route", "annotations", "values", "steps", "conflicts")},
            # What XLA compiled; null where the program was not compiled.
            "collectives": None if compiled is None else [c.to_json() for c in compiled],
            # Who compiled them: "shardscope", or the framework as the script ran it.
            "compiled_by": self.compiled_by,
            "predicted_collectives": self._predicted_json(),
            "memory": self.memory,
            "xla_warnings": None if xla_warnings is None else [w.to_json() for w in xla_warnings],
            "cost": None if self.pricing is None else self.pricing.to_json(),
        }
        if self.gspmd is not None:
            out["gspmd_differences"] = [d.to_json() for d in self.gspmd.differences]
            out["gspmd_collectives"] = [c.to_json() for c in self.gspmd.collectives]
        out["warnings"] = list(self.warnings)
        return out
