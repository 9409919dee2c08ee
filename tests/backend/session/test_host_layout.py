"""A session's host layout: counts and DCN factors as ``run --hosts/--dcn`` lay them out,
kept through mesh edits where they still fit, refused in one line where they do not."""

import numpy as np
import pytest

from shardscope.backend.errors import MeshError
from shardscope.backend.session.host_layout import (
    MAX_HOSTS,
    HostLayout,
    fit_mesh,
    refit,
    shown_factors,
    spans,
    with_count,
    with_factor,
)
from shardscope.backend.sharding.hosts import apply_hosts, hybrid_order
from shardscope.backend.sharding.mesh import Mesh, parse_mesh

MESH = parse_mesh("data=4,model=2")


def test_a_count_alone_keeps_the_device_order_and_splits_it_in_blocks():
    mesh, layout = with_count(MESH, HostLayout(), 2)
    assert mesh == MESH and layout == HostLayout(2)
    assert layout.hosts(mesh).grid(mesh).tolist() == [[0, 0], [0, 0], [1, 1], [1, 1]]
    # the iota order over 2 hosts is the hybrid layout with the hosts along data
    assert shown_factors(mesh, layout) == {"data": 2, "model": 1}
    assert spans(mesh, layout) == {"data": "both", "model": "ici"}


@pytest.mark.parametrize("dcn", [{"model": 2}, {"data": 2}, {"data": 4}, {"data": 2, "model": 2}])
def test_hosts_along_an_axis_lay_the_mesh_out_as_run_dcn_does(dcn):
    mesh, layout = MESH, HostLayout()
    for axis, factor in dcn.items():
        mesh, layout = with_factor(mesh, layout, axis, factor)
    cli_mesh, cli_hosts = apply_hosts(MESH, None, dcn)
    assert mesh == cli_mesh and layout.count == cli_hosts.count
    assert layout.factors == {"data": 1, "model": 1, **dcn}
    layout.check(mesh)  # the order is the layout's hybrid order


def test_model_across_hosts_puts_both_model_devices_on_different_hosts():
    mesh, layout = with_factor(MESH, HostLayout(), "model", 2)
    grid = layout.hosts(mesh).grid(mesh)
    assert (grid[:, 0] != grid[:, 1]).all() and (np.diff(grid, axis=0) == 0).all()
    assert spans(mesh, layout) == {"data": "ici", "model": "dcn"}
    assert layout.describe() == "2 hosts, DCN model=2"


def test_a_new_count_keeps_the_hosts_along_the_same_axes():
    mesh, layout = with_factor(MESH, HostLayout(), "data", 2)
    mesh4, layout4 = with_count(mesh, layout, 4)
    assert layout4.factors == {"data": 4, "model": 1}
    assert mesh4.device_order == hybrid_order(MESH, {"data": 4})
    mesh8, layout8 = with_count(mesh4, layout4, 8)
    assert layout8.factors == {"data": 4, "model": 2}
    back, one = with_count(mesh8, layout8, 1)
    assert one == HostLayout() and back.is_iota
    # the same count changes nothing
    assert with_count(mesh4, layout4, 4) == (mesh4, layout4)


def test_refit_keeps_what_it_can_of_each_factor():
    assert refit(MESH, {"data": 2, "model": 2}, 2) == {"data": 2, "model": 1}
    assert refit(MESH, {"data": 1, "model": 2}, 4) == {"data": 2, "model": 2}
    assert refit(parse_mesh("a=3,b=2"), {"a": 3, "b": 1}, 6) == {"a": 3, "b": 2}
    assert refit(parse_mesh("a=3,b=2"), {"a": 3, "b": 1}, 4) is None


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda: with_count(MESH, HostLayout(), 3), "do not split evenly among 3 hosts"),
        (lambda: with_count(MESH, HostLayout(), 0), f"from 1 to {MAX_HOSTS}"),
        (lambda: with_factor(MESH, HostLayout(), "data", 3), "give a number of hosts that"),
        (lambda: with_factor(MESH, HostLayout(), "nope", 2), "has no axis 'nope'"),
        (
            lambda: with_factor(parse_mesh("a=16,b=8"), HostLayout(64, None), "b", 8),
            "more than 64",
        ),
    ],
)
def test_a_layout_that_does_not_fit_is_one_line_naming_the_fix(edit, words):
    with pytest.raises(MeshError) as caught:
        edit()
    message = str(caught.value)
    assert words in message and "\n" not in message


def test_a_mesh_edit_keeps_the_layout_where_it_fits():
    mesh, layout = with_factor(MESH, HostLayout(), "model", 2)
    # a rename: the factors follow the axes by position, the order stays the layout's
    renamed = Mesh.from_dict({"batch": 4, "model": 2}, mesh.device_order)
    new, kept, lost = fit_mesh(mesh, layout, renamed)
    assert kept.factors == {"batch": 1, "model": 2} and new == renamed and not lost
    # a resize: the factors follow by name, the mesh takes their order
    bigger = parse_mesh("data=4,model=4")
    new, kept, lost = fit_mesh(mesh, layout, bigger)
    assert kept.factors == {"data": 1, "model": 2}
    assert new.device_order == hybrid_order(bigger, {"model": 2}) and not lost
    # two devices swapped: the order is the user's now, the count stays
    order = list(mesh.device_order)
    order[0], order[1] = order[1], order[0]
    swapped = Mesh(mesh.axes, tuple(order))
    new, kept, lost = fit_mesh(mesh, layout, swapped)
    assert new == swapped and kept == HostLayout(2) and not lost
    # a size the count does not split: back to one host, said
    new, kept, lost = fit_mesh(mesh, layout, parse_mesh("data=3,model=1"))
    assert kept == HostLayout() and "back to 1 host" in lost


def test_json_round_trip_and_bad_entries():
    mesh, layout = with_factor(MESH, HostLayout(), "model", 2)
    assert layout.to_json() == {"count": 2, "dcn": {"data": 1, "model": 2}}
    assert HostLayout.from_json(layout.to_json()) == layout
    assert HostLayout.from_json({"count": 2}) == HostLayout(2)
    for bad in ([], {"count": 0}, {"count": "2"}, {"count": 2, "dcn": {"model": "2"}}):
        with pytest.raises(MeshError):
            HostLayout.from_json(bad)
    with pytest.raises(MeshError, match="not the DCN layout"):
        layout.check(MESH)  # iota is not the model=2 layout
    with pytest.raises(MeshError, match="lay the mesh over 2 hosts, not 4"):
        HostLayout(4, layout.dcn).check(mesh)
