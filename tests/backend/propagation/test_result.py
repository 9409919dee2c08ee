"""Propagation results: per-value final shardings and the ``propagate --json`` object."""

from types import SimpleNamespace

from shardscope.backend.propagation.result import ValueInfo, value_infos
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.values import ValueSharding


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
