"""The result types: read from the worker's report, written as run --json prints them."""

from shardscope.backend.run.result import (
    CollectiveTensor,
    CompiledCollective,
    PredictedRef,
    RunResult,
    TensorRun,
    XlaWarningEntry,
    operand_label,
)

REPORT_TENSOR = {
    "name": "x",
    "shape": [4, 2],
    "dtype": "float32",
    "spec": "data,_",
    "hlo_sharding": "{devices=[2,1]<=[2]}",
    "shards": [
        {
            "device": 0,
            "index": [[0, 2], [0, 2]],
            "shape": [2, 2],
            "checksum": "aa",
            "values": [1.0, 2.0, 3.0, None],
        },
        {"device": 1, "index": [[2, 4], [0, 2]], "shape": [2, 2], "checksum": "bb", "values": None},
    ],
    "replica_mismatches": [],
    "max_rel_error": 0.0,
    "error_not_finite": False,
}


def _result():
    tensor = TensorRun.from_report(REPORT_TENSOR)
    predicted = PredictedRef("all-reduce", ("data",), 3, "jit(f)/dot_general", 7, 64)
    collective = CompiledCollective(
        "all-reduce", ((0, 1),), (2, 2), 16, "jit(f)/dot_general", 7, (predicted,)
    )
    return RunResult(
        "f",
        "cpu",
        2,
        {"data": 2},
        [tensor],
        [tensor],
        [collective],
        [],
        [XlaWarningEntry("careful", "jit(f)/dot_general", "dot.1")],
        0.5,
        0.001,
        {"temp": 8},
    )


def test_a_tensor_reads_the_report():
    tensor = TensorRun.from_report(REPORT_TENSOR)
    assert tensor.shards[0].index == ((0, 2), (0, 2))
    assert tensor.shards[0].values == (1.0, 2.0, 3.0, None)
    assert tensor.replicas_match
    mismatched = TensorRun.from_report({**REPORT_TENSOR, "replica_mismatches": [[0, 1]]})
    assert not mismatched.replicas_match


def test_a_shard_whose_tile_holds_padding_says_how_much():
    records = [
        {**REPORT_TENSOR["shards"][0], "padding": [0, 0]},
        {"device": 1, "index": [[2, 3], [2, 2]], "shape": [1, 0], "checksum": "00000000"},
        {**REPORT_TENSOR["shards"][1], "index": [[2, 3], [0, 2]], "shape": [1, 2]},
    ]
    records[1] = {**records[1], "values": None, "padding": [1, 2]}
    records[2] = {**records[2], "padding": [1, 0]}
    tensor = TensorRun.from_report({**REPORT_TENSOR, "shape": [3, 4], "shards": records})
    even, empty, short = tensor.shards
    assert (even.padding, even.tile, even.padding_text) == ((0, 0), (2, 2), "")
    assert short.tile == (2, 2) and short.padding_text == "tile [2, 2] with padding 1 in dim 0"
    assert empty.padding_text == "tile [2, 2] with padding 1 in dim 0, 2 in dim 1"
    assert empty.to_json()["padding"] == [1, 2]
    # A report of a run before shards said their padding reads as none.
    old = TensorRun.from_report(REPORT_TENSOR).shards[0]
    assert (old.padding, old.tile, old.padding_text) == ((), (2, 2), "")


def test_json_form():
    data = _result().to_json()
    assert data["outputs"][0]["shards"][0] == {
        "device": 0,
        "index": [[0, 2], [0, 2]],
        "shape": [2, 2],
        "checksum": "aa",
        "host": 0,
        "padding": [],
    }
    assert data["hosts"] == 1
    c = data["collectives"][0]
    assert c["crosses_hosts"] is False
    assert c["device_groups"] == [[0, 1]] and c["predicted"][0]["kind"] == "all-reduce"
    assert data["warnings"] == [
        {"message": "careful", "op_name": "jit(f)/dot_general", "instruction": "dot.1"}
    ]
    assert "hlo_text" not in data


def test_lookups():
    result = _result()
    assert result.kinds() == {"all-reduce": 1}
    assert result.tensor("x").spec == "data,_"


def test_a_replica_sent_once_gets_its_values_from_the_record_that_carries_them():
    from shardscope.backend.run.result import TensorRun

    records = [
        {
            "device": 0,
            "index": [[0, 2]],
            "shape": [2],
            "checksum": "aa",
            "values": [1.0, 2.0],
            "values_shape": [2],
            "values_from": None,
        },
        {
            "device": 1,
            "index": [[0, 2]],
            "shape": [2],
            "checksum": "aa",
            "values": None,
            "values_shape": None,
            "values_from": 0,
        },
    ]
    tensor = TensorRun.from_report(
        {
            "name": "x",
            "shape": [2],
            "dtype": "float32",
            "spec": "_",
            "hlo_sharding": "",
            "shards": records,
            "max_rel_error": None,
            "replica_mismatches": [],
            "error_not_finite": False,
        }
    )
    assert [s.values for s in tensor.shards] == [(1.0, 2.0), (1.0, 2.0)]
    assert tensor.shards[1].values_shape == (2,) and not tensor.shards[1].pooled


def test_an_operand_label_says_who_put_it_there_and_in_which_pass():
    told = CollectiveTensor("jit(f)/transpose(jvp())/add", 3, "f.py", 9, "user", "backward")
    assert operand_label(1, told) == "[1] user, backward"
    assert operand_label(0, CollectiveTensor("jit(f)/add", None, "f.py", 9)) == "[0] ?, ?"
