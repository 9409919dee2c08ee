"""``analyse``: propagation, compile, host layout, pricing and the GSPMD comparison in one
call, held against the compiler's own compile of the same program."""

from __future__ import annotations

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.sharding.hosts import Hosts
from tests.support.compile_oracle import compiled_text, loaded

pytestmark = pytest.mark.slow


def test_every_step_of_one_call_is_in_its_record():
    program = loaded("example:mlp")
    analysis = analyse(program, hosts=Hosts(2, 8), hardware="h100")
    expected = read_collectives(compiled_text(program))
    got = analysis.to_json()
    assert sorted(c["kind"] for c in got["collectives"]) == sorted(c["kind"] for c in expected)
    assert analysis.compiled is not None and analysis.compile_error is None
    assert got["hosts"] == 2 and analysis.traffic.hosts == 2
    assert all(c["crosses_hosts"] is not None for c in got["collectives"])
    assert got["cost"]["hardware"] == "h100" and analysis.pricing.hosts == 2
    assert "gspmd_differences" not in got


def test_gspmd_is_compared_only_when_asked():
    program = loaded("example:conflict")
    analysis = analyse(program, gspmd=True)
    assert analysis.gspmd is not None
    got = analysis.to_json()
    assert got["gspmd_collectives"] == [c.to_json() for c in analysis.gspmd.collectives]
    assert got["hosts"] == 1 and got["cost"] is not None
