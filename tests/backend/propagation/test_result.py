"""Propagation results: per-value final shardings and the ``propagate --json`` object."""

import dataclasses
from types import SimpleNamespace

from shardscope.backend.propagation.result import ValueInfo, value_infos
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.values import ValueSharding
from tests.support.compile_oracle import propagated


def _value(vid, name, shape):
    return SimpleNamespace(
        id=vid,
        name=name,
        display_name=name,
        role="arg",
        shape=shape,
        dtype="f32",
        rank=len(shape),
    )


def test_value_json_leaves_closed_out():
    info = ValueInfo(3, "x", "x", "arg", (8, 4), "f32", [["data"], []], "h", (True, False))
    got = info.to_json()
    assert list(got) == [
        "id",
        "name",
        "display_name",
        "role",
        "shape",
        "dtype",
        "spec",
        "hlo_sharding",
    ]
    assert got["shape"] == [8, 4] and got["spec"] == [["data"], []]
    assert ValueInfo(0, None, "%0", "intermediate", None, "f32", [], "").to_json()["shape"] is None


def test_value_infos_merge_sub_axes_and_default_to_replicated():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    graph = SimpleNamespace(values=[_value(0, "x", (8, 4)), _value(1, "y", (8,))])
    merged = ValueSharding((("data:(1)2", "data:(2)2"), ()), (True, False))
    x, y = value_infos(graph, {0: merged}, mesh)
    assert x.spec == [["data"], []] and x.closed == (True, False)
    assert (
        x.hlo_sharding
        and x.hlo_sharding
        == value_infos(graph, {0: ValueSharding((("data",), ()), (True, False))}, mesh)[
            0
        ].hlo_sharding
    )
    assert y.spec == [[]] and y.closed == (False,)
    # A sub-axis that stays one has no HloSharding text.
    half = ValueSharding((("data:(1)2",), ()), (True, True))
    assert value_infos(graph, {0: half}, mesh)[0].hlo_sharding == ""


def test_result_json_keys_in_order_with_gspmd_differences_before_warnings():
    result = propagated("example:mlp")
    got = result.to_json()
    keys = ["program", "framework", "partitioner", "mesh", "device_order", "hosts", "route"]
    keys += ["annotations", "values", "steps", "conflicts"]
    assert list(got) == [
        *keys,
        "collectives",
        "compiled_by",
        "predicted_collectives",
        "memory",
        "xla_warnings",
        "cost",
        "warnings",
    ]
    # Not compiled: no compiled collectives, and no prediction said to match one.
    assert got["collectives"] is None and got["memory"] is None and got["cost"] is None
    assert got["xla_warnings"] is None and got["hosts"] == 1
    assert [p["matched"] for p in got["predicted_collectives"]] == [None] * len(result.collectives)
    assert got["values"][0] == result.values[0].to_json()

    @dataclasses.dataclass
    class Difference:
        id: int

        def to_json(self):
            return {"id": self.id}

    with_gspmd = dataclasses.replace(result, gspmd_differences=[Difference(4)])
    got = with_gspmd.to_json()
    assert list(got)[-2:] == ["gspmd_differences", "warnings"]
    assert got["gspmd_differences"] == [{"id": 4}]
