"""Device groups of a collective over mesh axes and sub-axes."""

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.device_groups import device_groups
from shardscope.backend.sharding.mesh import Mesh


def test_groups_along_one_axis_of_a_2d_mesh():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    # Row-major positions: device (d, m) is 2*d + m.
    assert device_groups(mesh, ["data"]) == [(0, 2, 4, 6), (1, 3, 5, 7)]
    assert device_groups(mesh, ["model"]) == [(0, 1), (2, 3), (4, 5), (6, 7)]


def test_both_axes_make_one_group_in_the_collectives_axis_order():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    assert device_groups(mesh, ["data", "model"]) == [(0, 1, 2, 3, 4, 5, 6, 7)]
    assert device_groups(mesh, ["model", "data"]) == [(0, 2, 4, 6, 1, 3, 5, 7)]


def test_no_axes_leaves_every_device_alone():
    mesh = Mesh.from_dict({"data": 2, "model": 2})
    assert device_groups(mesh, []) == [(0,), (1,), (2,), (3,)]


def test_sub_axes_split_an_axis_major_first():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    # data:(1)2 is the major half of data: data positions 0,1 vs 2,3 differ on it.
    assert device_groups(mesh, ["data:(1)2"]) == [(0, 4), (1, 5), (2, 6), (3, 7)]
    # data:(2)2 is the minor half: positions 0 and 1 of data differ on it.
    assert device_groups(mesh, ["data:(2)2"]) == [(0, 2), (1, 3), (4, 6), (5, 7)]
    # Both halves together are the whole axis.
    assert device_groups(mesh, ["data:(1)2", "data:(2)2"]) == device_groups(mesh, ["data"])


def test_groups_hold_device_ids_of_a_permuted_mesh():
    mesh = Mesh.from_dict({"data": 2, "model": 2}, device_order=[3, 2, 1, 0])
    # Position (0, 0) holds device 3, (0, 1) device 2: a model group pairs them.
    assert device_groups(mesh, ["model"]) == [(3, 2), (1, 0)]
    assert device_groups(mesh, ["data"]) == [(3, 1), (2, 0)]


def test_a_3d_mesh_groups_across_the_middle_axis():
    mesh = Mesh.from_dict({"a": 2, "b": 3, "c": 2})
    groups = device_groups(mesh, ["b"])
    assert len(groups) == 4 and all(len(g) == 3 for g in groups)
    assert groups[0] == (0, 2, 4) and groups[1] == (1, 3, 5) and groups[2] == (6, 8, 10)
    assert sorted(d for g in groups for d in g) == list(range(12))


@pytest.mark.parametrize(
    ("axes", "message"),
    [(["pipe"], "not in the mesh"), (["data:(1)3"], "does not divide"), (["data:(0)2"], "divide")],
)
def test_bad_axes_name_the_problem(axes, message):
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    with pytest.raises(ShardscopeError, match=message):
        device_groups(mesh, axes)


def test_spanned_axes_name_the_axes_a_group_spans_part_of():
    from shardscope.backend.sharding.device_groups import spanned_axes

    mesh = Mesh.from_dict({"data": 4, "model": 2})
    # Devices 0 and 4: data 0 and data 2 (model 0): a group along part of data.
    assert spanned_axes(mesh, [[0, 4], [2, 6], [1, 5], [3, 7]]) == ("data",)
    assert spanned_axes(mesh, [[0, 1], [2, 3]]) == ("model",)
    assert spanned_axes(mesh, [[0, 3]]) == ("data", "model")
    assert spanned_axes(mesh, None) == ()
