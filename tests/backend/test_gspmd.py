"""GSPMD side by side: the conflict example's add is sharded by GSPMD, not by Shardy."""

import sys
from pathlib import Path

import pytest

from backend.errors import ShardscopeError
from backend.gspmd import gspmd_differences, read_hlo_instructions

sys.path.insert(0, str(Path(__file__).parent))
from compile_oracle import loaded, propagated  # noqa: E402

HLO = """
ENTRY %main.1 (x.1: f32[16,32], y.1: f32[16,32]) -> f32[16,32] {
  %x.1 = f32[16,32]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}, metadata={op_name="x"}
  %sin.1 = f32[16,32]{1,0} sine(%x.1), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}, metadata={op_name="jit(f)/sin" stack_frame_id=2}
  ROOT %add.1 = f32[16,32]{1,0} add(%sin.1, %x.1), sharding={replicated}, metadata={op_name="jit(f)/add"}
}
"""


def test_read_hlo_instructions():
    got = read_hlo_instructions(HLO)
    assert [(i["opcode"], i["shape"], i["op_name"]) for i in got] == [
        ("sine", [16, 32], "jit(f)/sin"),
        ("add", [16, 32], "jit(f)/add"),
    ]
    assert got[1]["sharding"] == "{replicated}"


@pytest.mark.slow
def test_conflict_example_differs_on_the_add():
    result = propagated("example:conflict")
    diffs = gspmd_differences(loaded("example:conflict"), result)
    by_name = {d.display_name: d for d in diffs}
    assert "result[0]" in by_name
    add = by_name["result[0]"]
    assert add.shardy == [[], []] and add.gspmd == [["data"], []]


def test_mlir_programs_cannot_be_recompiled(tmp_path):
    class Fake:
        path = str(tmp_path / "m.mlir")

    with pytest.raises(ShardscopeError, match="needs a Python program"):
        gspmd_differences(Fake(), propagated("example:conflict"))


@pytest.mark.slow
def test_result_specs_reach_gspmd_too():
    from backend.propagation import propagate

    program = loaded("example:conflict")
    specs = {"x": "data,_", "y": "model,_", "result[0]": "_,model"}
    result = propagate(program, None, specs)
    assert result.values[result.graph.functions[result.graph.main].results[0]].spec == [
        [],
        ["model"],
    ]
    diffs = gspmd_differences(program, result)
    # Both compilers honour the result spec, so the result no longer differs.
    assert "result[0]" not in {d.display_name for d in diffs}
