"""``Analysis``: each step's record side by side, and the ``propagate --json`` object they
make together."""

from __future__ import annotations

import dataclasses

import pytest

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.cost.traffic import HostTraffic
from shardscope.backend.gspmd.compare import GspmdComparison
from shardscope.backend.run.result import NotCompiled
from tests.support.compile_oracle import propagated

KEYS = ["program", "framework", "partitioner", "mesh", "device_order", "sharded_by", "hosts"]
KEYS += ["route"]
KEYS += ["annotations", "values", "steps", "conflicts"]
KEYS += ["collectives", "compiled_by", "predicted_collectives", "memory", "xla_warnings", "cost"]


def test_json_keys_in_order_with_gspmd_before_warnings():
    result = propagated("example:mlp")
    got = Analysis(result).to_json()
    assert list(got) == [*KEYS, "warnings"]
    # Not compiled: no compiled collectives, and no prediction said to match one.
    assert got["collectives"] is None and got["memory"] is None and got["cost"] is None
    assert got["xla_warnings"] is None and got["hosts"] == 1 and got["compiled_by"] is None
    assert got["sharded_by"] == {}  # a JAX program: no script's call to name
    assert [p["matched"] for p in got["predicted_collectives"]] == [None] * len(result.collectives)
    assert got["values"][0] == result.values[0].to_json()

    @dataclasses.dataclass
    class Difference:
        id: int

        def to_json(self):
            return {"id": self.id}

    comparison = GspmdComparison([Difference(4)], [], ("traced again",))
    got = Analysis(result, gspmd=comparison).to_json()
    assert list(got)[-3:] == ["gspmd_differences", "gspmd_collectives", "warnings"]
    assert got["gspmd_differences"] == [{"id": 4}] and got["warnings"][-1] == "traced again"


def test_warnings_come_in_the_order_the_steps_ran():
    result = propagated("example:mlp").warned("from propagation")
    analysis = Analysis(
        result,
        NotCompiled("not compiled: too many devices", failed=False),
        HostTraffic(1, warnings=("from the hosts",)),
        gspmd=GspmdComparison([], [], ("from GSPMD",)),
    )
    assert analysis.warnings[-4:] == (
        "from propagation",
        "not compiled: too many devices",
        "from the hosts",
        "from GSPMD",
    )
    # A compile that was not made is no failure; one that failed is, and says nothing
    # among the warnings (the window and the CLI say it as an error).
    assert analysis.compile_error is None and analysis.compiled is None
    failed = analysis.with_parts(compile=NotCompiled("boom"))
    assert failed.compile_error == "boom" and "boom" not in failed.warnings


def test_the_parts_are_frozen():
    result = propagated("example:mlp")
    analysis = Analysis(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.warnings = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        analysis.compile = NotCompiled("x")  # type: ignore[misc]
    # Replacing a part leaves the analysis it came from as it was.
    other = analysis.with_parts(compile=NotCompiled("x"))
    assert analysis.compile is None and other.propagation is result
