"""GSPMD side by side: the conflict example's add is sharded by GSPMD, not by Shardy."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import compare_gspmd, gspmd_differences
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec
from tests.support.compile_oracle import loaded, propagated
from tests.support.inputs import CORPUS, INPUTS, MLIR

TORCH = INPUTS / "torch"


@pytest.mark.slow
def test_conflict_example_differs_on_the_add():
    result = propagated("example:conflict")
    diffs = gspmd_differences(loaded("example:conflict"), result)
    by_name = {d.display_name: d for d in diffs}
    assert "result[0]" in by_name
    add = by_name["result[0]"]
    assert add.shardy == [[], []] and add.gspmd == [["data"], []]


@pytest.mark.slow
def test_result_specs_reach_gspmd_too():
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


@pytest.mark.slow
def test_constraints_on_intermediates_reach_gspmd():
    program = loaded("example:conflict")
    graph = program.graph
    sine = next(op for op in graph.ops if op.name == "stablehlo.sine")
    # x arrives on data, y on model: constraining sin(x) to model settles the add.
    specs = {"x": "data,_", "y": "model,_", sine.results[0]: "model,_"}
    result = propagate(program, None, specs)
    out = graph.functions[graph.main].results[0]
    assert result.values[out].spec == [["model"], []]
    comparison = compare_gspmd(program, result)
    diffs = {d.display_name: d for d in comparison.differences}
    # Traced again from Python, GSPMD would not see the constraint and keep data.
    assert "result[0]" not in diffs
    assert comparison.warnings == ()


@pytest.mark.slow
def test_mlir_programs_are_compared_too():
    path = MLIR / "sdy.mlir"
    program = loaded(str(path))
    result = propagate(program)
    comparison = compare_gspmd(program, result)
    diffs = comparison.differences
    assert comparison.warnings == ()
    graph = result.graph
    # Every value GSPMD reported on has a program id; the arguments keep their specs.
    assert all(0 <= d.id < len(graph.values) for d in diffs)
    assert not {d.name for d in diffs} & {"x", "w"}


@pytest.mark.slow
def test_shard_map_programs_fall_back_to_tracing_with_a_warning():
    path = CORPUS / "shmap.py"
    program = loaded(str(path))
    result = propagate(program)
    warnings = compare_gspmd(program, result).warnings
    assert len(warnings) == 1 and result.warnings == ()
    assert "shard_map" in warnings[0] and "traced again" in warnings[0]


@pytest.mark.slow
def test_an_mlir_module_with_shard_map_cannot_be_compared(tmp_path):
    text = loaded(str(CORPUS / "shmap.py")).mlir_text
    path = tmp_path / "shmap.mlir"
    path.write_text(text)
    program = loaded(str(path))
    with pytest.raises(ShardscopeError, match="shard_map cannot be recompiled with GSPMD"):
        gspmd_differences(program, propagate(program, {"data": 4, "model": 2}))


@pytest.mark.slow
def test_a_permuted_device_order_compares_device_for_device():
    program = loaded("example:conflict")
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    diffs = gspmd_differences(program, propagate(program, mesh))
    # As with the iota order: only the add's result differs. The module compiles on the
    # mesh's devices in its order, so XLA numbers devices by mesh position, as
    # ValueInfo.hlo_sharding does.
    assert [d.display_name for d in diffs] == ["result[0]"]
    assert diffs[0].gspmd == [["data"], []]
    assert diffs[0].gspmd_text == hlo_sharding_text(mesh, parse_spec("data,_"), 2)
    assert diffs[0].shardy_hlo == "{replicated}"


@pytest.fixture(scope="module")
def torch_conflict():
    program = loaded(str(TORCH / "capture_conflict.json") + "#sync1")
    result = propagate(program)
    return program, result, compare_gspmd(program, result)


@pytest.mark.slow
def test_a_torch_xla_capture_keeps_its_own_shardings_under_gspmd(torch_conflict):
    # The module carries torch_xla's mhlo.sharding texts (mesh positions over devices
    # 0,2,4,6,1,3,5,7): GSPMD must read them as the same shardings Shardy was given.
    program, result, comparison = torch_conflict
    assert program.device_order == (0, 2, 4, 6, 1, 3, 5, 7)
    graph = result.graph
    args = {graph.values[v].name: v for v in graph.functions[graph.main].arguments}
    differing = {d.display_name for d in comparison.differences}
    assert not differing & set(args)
    assert result.values[args["x"]].spec == [["data"], []]
    assert result.values[args["y"]].spec == [["model"], []]


@pytest.mark.slow
def test_a_torch_xla_capture_differs_where_gspmd_settles_the_conflict(torch_conflict):
    # sin(x) + y with x on data and y on model: GSPMD keeps data, Shardy replicates.
    _, result, comparison = torch_conflict
    (diff,) = comparison.differences
    assert diff.display_name == "result[0]"
    assert diff.shardy == [[], []] and diff.gspmd == [["data"], []]
    assert diff.gspmd_text == hlo_sharding_text(result.mesh, parse_spec("data,_"), 2)
    # GSPMD's collectives name the torch op they serve.
    assert [c.kind for c in comparison.collectives] == ["collective-permute"]
    assert comparison.collectives[0].tensors[0].op_name.startswith("aten__add")


def test_difference_json_names_gspmd_text_gspmd_hlo():
    from shardscope.backend.gspmd.compare import Difference

    d = Difference(
        3, "x", "x", "arg", [["data"], []], "{devices=[4,1,2]<=[8]}", [[], []], "{replicated}"
    )
    assert d.to_json() == {
        "id": 3,
        "name": "x",
        "display_name": "x",
        "role": "arg",
        "shardy": [["data"], []],
        "shardy_hlo": "{devices=[4,1,2]<=[8]}",
        "gspmd": [[], []],
        "gspmd_hlo": "{replicated}",
    }
    assert list(d.to_json()) == [
        "id",
        "name",
        "display_name",
        "role",
        "shardy",
        "shardy_hlo",
        "gspmd",
        "gspmd_hlo",
    ]


@pytest.mark.slow
def test_a_traced_program_compiles_on_the_mesh_devices_in_their_order():
    from shardscope.backend.gspmd.compare import compare_gspmd
    from tests.support.device_order import jit_groups
    from tests.support.inputs import PROGRAMS

    program = loaded(str(PROGRAMS / "shard_map_context_mesh.py"))
    order = (0, 2, 1, 3)
    result = propagate(program, parse_mesh("data=2,model=2", order))
    comparison = compare_gspmd(program, result)
    assert "traced again" in comparison.warnings[0]  # shard_map: the traced route
    # GSPMD's groups are those of jax.jit on the same devices in the same order (the
    # partitioner does not change the user's own psum), not those of devices 0..3.
    expected = jit_groups(program, order)
    assert expected != jit_groups(program, range(4))
    assert [c.device_groups for c in comparison.collectives] == expected
    assert comparison.differences == []
