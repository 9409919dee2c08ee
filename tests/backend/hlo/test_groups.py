"""Device groups in every form XLA writes them; the texts are from real compiles here."""

import pytest

from shardscope.backend.hlo.groups import GroupsError, parse_groups, to_device_ids


def test_explicit_lists():
    # mlp's all-reduce over model (4x2 mesh)
    assert parse_groups("{{0,1},{2,3},{4,5},{6,7}}") == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_no_groups_is_every_device():
    assert parse_groups("{}", 4) == [[0, 1, 2, 3]]
    with pytest.raises(GroupsError):
        parse_groups("{}")


def test_iota_lists():
    # attention's all-reduce over model on data=2, model=4
    assert parse_groups("[2,4]<=[8]") == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert parse_groups("[2,4]<=[4,2]T(1,0)") == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_mesh_axis_lists():
    # conflict's two all-gathers on data=4, model=2: over data, then over model.
    over_data = "mesh['axis_0'=4,'axis_1'=1,'axis_2'=2] {'axis_0'}"
    assert parse_groups(over_data) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    over_model = "mesh['axis_0'=2,'axis_1'=1,'axis_2'=4], device_ids=([4,2]T(1,0)) {'axis_0'}"
    assert parse_groups(over_model) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # matmul6's all-reduce over data: the middle axis of three
    middle = "mesh['axis_0'=1,'axis_1'=4,'axis_2'=2] {'axis_1'}"
    assert parse_groups(middle) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_mesh_axis_lists_over_two_axes():
    text = "mesh['a'=2,'b'=2,'c'=2] {'a','c'}"
    assert parse_groups(text) == [[0, 1, 4, 5], [2, 3, 6, 7]]


def test_permute_pairs():
    text = "{{0,2},{2,4},{4,6},{6,0},{1,3},{3,5},{5,7},{7,1}}"
    assert parse_groups(text)[:2] == [[0, 2], [2, 4]]


def test_positions_become_device_ids():
    assert to_device_ids([[0, 1], [2, 3]], [5, 2, 7, 0]) == [[5, 2], [7, 0]]


@pytest.mark.parametrize(
    "text", ["<=[8]", "mesh['a'=2] {'b'}", "mesh['a'=2], device_ids=(0,1,2) {'a'}", "what"]
)
def test_unknown_forms_are_refused(text):
    with pytest.raises(GroupsError):
        parse_groups(text)


@pytest.mark.parametrize(
    "text, devices",
    [
        ("[1000000,1000000]<=[1000000000000]", None),
        ("[2,4]<=[1000000000000000000000]", None),
        ("mesh['a'=1000000,'b'=1000000] {'a'}", None),
        ("{}", 10**12),
        ("{{" + ",".join(["0"] * ((1 << 20) + 1)) + "}}", None),
        ("[2,4]<=[4,3]", None),
        ("[8]<=[2,4]T(0,0)", None),
    ],
    ids=["iota", "iota-overflow", "mesh", "all-devices", "explicit", "mismatch", "bad-perm"],
)
def test_groups_too_large_or_malformed_are_unreadable_not_expanded(text, devices):
    with pytest.raises(GroupsError):
        parse_groups(text, devices)


def test_positions_past_the_assignment_are_unreadable():
    with pytest.raises(GroupsError, match="past the 2 assigned"):
        to_device_ids([[0, 5]], [7, 8])
