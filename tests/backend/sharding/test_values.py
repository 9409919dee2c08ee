"""Value shardings: sub-axis names, axis sizes, merging sub-axes back into axes."""

from shardscope.backend.sharding.values import (
    ValueSharding,
    axis_size,
    merge_full_axes,
    replicated,
    split_axis,
)

MESH = {"data": 4, "model": 2}


def test_split_axis_and_axis_size():
    assert split_axis("data:(2)2") == ("data", 2, 2)
    assert split_axis("data") is None
    assert axis_size("data", MESH) == 4
    assert axis_size("data:(1)2", MESH) == 2
    assert axis_size("elsewhere", MESH) == 1


def test_merge_full_axes():
    assert merge_full_axes(("data:(1)2", "data:(2)2"), MESH) == ("data",)
    assert merge_full_axes(("data:(1)2", "model"), MESH) == ("data:(1)2", "model")
    assert merge_full_axes(("model", "data"), MESH) == ("model", "data")


def test_replicated_and_with_dims():
    r = replicated(2)
    assert r.dims == ((), ()) and r.closed == (False, False) and r.axes == set()
    s = ValueSharding((("data",), ()), (True, True), ("model",)).with_dims(((), ("data",)))
    assert s.dims == ((), ("data",)) and s.closed == (True, True) and s.replicated == ("model",)
