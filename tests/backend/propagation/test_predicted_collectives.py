"""Collectives from Shardy's explicit reshards, attached to the ops they serve."""

from shardscope.backend.propagation.predicted_collectives import Collective, bytes_per_device
from shardscope.backend.sharding.sdy_text import axes_in
from tests.support.compile_oracle import propagated


def test_matmul6_each_case_gets_its_collectives():
    result = propagated("example:matmul6")
    graph = result.graph
    kinds: dict[str, list[str]] = {}
    for c in result.collectives:
        scope = graph.ops[c.op].scope.split("/")[-1]
        kinds.setdefault(scope, []).append(c.kind)
    assert "rows_cols" not in kinds and "replicated" not in kinds
    assert kinds["contract"] == ["all_reduce"]
    assert "all_slice" in kinds["contract_lhs"] and "all_reduce" in kinds["contract_lhs"]
    assert kinds["rows_rows"] == ["all_gather"]
    assert "all_reduce" in kinds["mismatch"]
    contract = next(c for c in result.collectives if graph.ops[c.op].scope.endswith("contract"))
    # 64x32 f32 result replicated on every device, all-reduced over data (4 devices).
    assert contract.axes == ("data",) and contract.group_size == 4
    assert contract.bytes_per_device == 2 * 64 * 32 * 4 * 3 // 4
    assert graph.values[contract.value].shape == (64, 32)


def test_bytes_per_device_formulas():
    assert bytes_per_device("all_gather", 1024, 4) == 768
    assert bytes_per_device("all_slice", 1024, 4) == 0
    assert bytes_per_device("all_reduce", 1024, 4) == 1536
    assert bytes_per_device("reduce_scatter", 256, 4) == 768
    assert bytes_per_device("all_to_all", 1024, 4) == 768
    assert bytes_per_device("collective_permute", 1024, 2) == 1024
    assert bytes_per_device("all_reduce", 1024, 1) == 0


def test_axes_in_reads_sub_axes():
    assert axes_in('#sdy<list_of_axis_ref_lists[{"data":(1)2}, {"model"}]>') == (
        "data:(1)2",
        "model",
    )


def test_collective_json_lists_axes_and_spec_as_lists():
    c = Collective(5, "stablehlo.dot_general", "all_reduce", ("data",), 9, (("data",), ()), 96, 4)
    assert c.to_json() == {
        "op": 5,
        "op_name": "stablehlo.dot_general",
        "kind": "all_reduce",
        "axes": ["data"],
        "value": 9,
        "out_spec": [["data"], []],
        "bytes_per_device": 96,
        "group_size": 4,
    }
