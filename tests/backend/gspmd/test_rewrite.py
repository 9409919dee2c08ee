"""Shardy's annotations rewritten in GSPMD's vocabulary."""

import pytest

from shardscope.backend.gspmd.compare import gspmd_differences
from shardscope.backend.gspmd.rewrite import NoGspmdForm, gspmd_module, op_id
from shardscope.backend.propagation.propagate import propagate
from tests.support.compile_oracle import loaded, propagated
from tests.support.inputs import CORPUS


def test_op_ids_are_read_back_only_from_our_names():
    assert op_id("shardscope.op.12") == 12
    assert op_id("shardscope.op.x") is None
    assert op_id("jit(f)/add") is None


@pytest.mark.slow
def test_constraints_become_sharding_custom_calls_and_ops_are_named_by_id():
    program = loaded("example:conflict")
    sine = next(op for op in program.graph.ops if op.name == "stablehlo.sine")
    result = propagate(program, None, {"x": "data,_", sine.results[0]: "model,_"})
    text = gspmd_module(program, result)
    assert "sdy." not in text
    assert "stablehlo.custom_call @Sharding" in text
    assert f'"shardscope.op.{sine.id}"' in text
    assert "mhlo.num_partitions = 8" in text


@pytest.mark.slow
def test_shard_map_has_no_gspmd_form():
    program = loaded(str(CORPUS / "shmap.py"))
    with pytest.raises(NoGspmdForm, match="shard_map"):
        gspmd_module(program, propagated(str(CORPUS / "shmap.py")))


@pytest.mark.slow
def test_open_dims_stay_free_for_gspmd_as_jax_writes_them():
    program = loaded("example:conflict")
    sine = next(op for op in program.graph.ops if op.name == "stablehlo.sine")
    specs = {"x": "?,?", "y": "model,_", sine.results[0]: "model,?"}
    result = propagate(program, None, specs)
    text = gspmd_module(program, result)
    # x is wholly open: unannotated for GSPMD; the constraint's open dim is unspecified.
    assert "unspecified_dims=[1]" in text
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert main.count("mhlo.sharding") == 1  # y only
    gspmd_differences(program, result)  # compiles
