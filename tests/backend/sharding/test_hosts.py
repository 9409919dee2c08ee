"""Hosts of a mesh: ownership, axis spans, hybrid orders (against JAX's own), traffic."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from jax.experimental import mesh_utils

from shardscope.backend.errors import MeshError
from shardscope.backend.sharding.hosts import (
    Hosts,
    across_dcn,
    apply_hosts,
    axis_spans,
    axis_steps,
    dcn_factors,
    group_traffic,
    hybrid_order,
    ici_only_dcn,
    mesh_warnings,
    parse_dcn,
)
from shardscope.backend.sharding.mesh import Mesh


def _devices(hosts: int, per_host: int) -> list[SimpleNamespace]:
    # Device ids as a multi-process CPU job numbers them: process k's start at k * 2048.
    return [
        SimpleNamespace(
            id=h * 2048 + i, process_index=h, platform="cpu", device_kind="cpu", slice_index=None
        )
        for h in range(hosts)
        for i in range(per_host)
    ]


@pytest.mark.parametrize(
    ("sizes", "dcn"),
    [
        ((2, 4), (2, 1)),
        ((4, 2), (2, 1)),
        ((4, 2), (1, 2)),
        ((4, 4), (2, 2)),
        ((2, 2, 4), (1, 2, 2)),
    ],
)
def test_hybrid_order_is_create_hybrid_device_mesh(sizes, dcn):
    hosts = int(np.prod(dcn))
    total = int(np.prod(sizes))
    devices = _devices(hosts, total // hosts)
    ici = tuple(s // d for s, d in zip(sizes, dcn, strict=True))
    jax_mesh = mesh_utils.create_hybrid_device_mesh(ici, dcn, devices, process_is_granule=True)
    number = {d.id: k for k, d in enumerate(devices)}
    names = [f"a{i}" for i in range(len(sizes))]
    mesh = Mesh.from_dict(dict(zip(names, sizes, strict=True)))
    order = hybrid_order(mesh, dict(zip(names, dcn, strict=True)))
    assert order == tuple(number[d.id] for d in jax_mesh.flat)
    ordered = Mesh.from_dict(dict(zip(names, sizes, strict=True)), order)
    assert dcn_factors(ordered, Hosts(hosts, total)) == dict(zip(names, dcn, strict=True))


def test_axis_spans_and_ownership():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    hosts = Hosts(2, 8)
    assert [hosts.of_device(d) for d in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert axis_spans(mesh, hosts) == {"data": "both", "model": "ici"}
    assert hosts.grid(mesh).tolist() == [[0, 0], [0, 0], [1, 1], [1, 1]]
    # The same axes with model across hosts: every step along model crosses.
    swapped = Mesh(mesh.axes, hybrid_order(mesh, {"model": 2}))
    assert axis_spans(swapped, hosts) == {"data": "ici", "model": "dcn"}
    assert ici_only_dcn(mesh, hosts, ["model"]) == {"data": 2, "model": 1}
    assert ici_only_dcn(Mesh.from_dict({"model": 8}), hosts, ["model"]) is None


def test_bad_hosts_and_dcn_are_one_line_errors():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    with pytest.raises(MeshError, match="divides 8"):
        Hosts(3, 8)
    with pytest.raises(MeshError, match="lacks"):
        parse_dcn("batch=2", mesh)
    with pytest.raises(MeshError, match="divides it"):
        parse_dcn("model=4", mesh)
    assert parse_dcn("data=2", mesh) == {"data": 2, "model": 1}
    assert parse_dcn("model", mesh) == {"data": 1, "model": 2}


def test_group_traffic_by_kind():
    host = lambda d: d // 4  # noqa: E731
    # A ring over 0..7 crosses hosts twice (3 -> 4 and 7 -> 0) of its 8 hops.
    assert group_traffic("all-reduce", list(range(8)), 100, host) == (600, 200)
    assert group_traffic("all-gather", [0, 1, 2, 3], 100, host) == (400, 0)
    # A permute pair 0 -> 4 crosses; 0 -> 1 does not.
    assert group_traffic("collective-permute", [0, 4], 50, host) == (0, 50)
    assert group_traffic("collective-permute", [0, 1], 50, host) == (50, 0)
    # An all-to-all over 0, 1, 4, 5: each device sends 2 of its 3 shares to the other host.
    within, across = group_traffic("all-to-all", [0, 1, 4, 5], 300, host)
    assert (round(within), round(across)) == (400, 800)
    assert Hosts(2, 8).crosses([[0, 4]]) and not Hosts(2, 8).crosses([[0, 1], [4, 5]])


def test_apply_hosts_lays_out_a_hybrid_mesh():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    assert apply_hosts(mesh, 2, None) == (mesh, Hosts(2, 8))
    ordered, hosts = apply_hosts(mesh, None, "model=2")
    assert hosts == Hosts(2, 8) and axis_spans(ordered, hosts) == {"data": "ici", "model": "dcn"}
    with pytest.raises(MeshError, match="product is 4"):
        apply_hosts(mesh, 4, "model=2")


def test_an_axis_on_both_links_is_warned_with_the_layouts_that_fix_it():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    hosts = Hosts(2, 8)
    assert axis_steps(mesh, hosts, "data") == ["stays", "crosses", "stays"]
    (line,) = mesh_warnings(mesh, hosts)
    assert line.startswith("axis data (4) spans both ICI and DCN on 2 hosts: steps 0→1 and 2→3")
    assert "1→2 crosses hosts" in line
    assert "--dcn data=2 gives: 2 hosts along data, 2 devices on each" in line
    assert "--dcn model=2 keeps data within each host" in line
    # The fix it names really keeps data on one host, and then nothing is warned.
    fixed, fixed_hosts = apply_hosts(mesh, None, "model=2")
    assert axis_spans(fixed, fixed_hosts)["data"] == "ici"
    assert mesh_warnings(fixed, fixed_hosts) == []
    # Four hosts along data: every step crosses, nothing spans both.
    assert mesh_warnings(mesh, Hosts(4, 8)) == []
    assert mesh_warnings(mesh, Hosts(1, 8)) == []


def test_an_axis_no_layout_keeps_on_a_host_is_offered_the_layout_across_hosts():
    mesh = Mesh.from_dict({"data": 2, "model": 4})
    (line,) = mesh_warnings(mesh, Hosts(4, 8))
    assert "model (4)" in line and "--dcn model=4 lays model wholly across hosts" in line
    assert "keeps model within" not in line
    assert across_dcn(mesh, Hosts(4, 8), ["model"]) == {"data": 1, "model": 4}
    assert across_dcn(mesh, Hosts(2, 8), ["model"]) is None
    fixed, fixed_hosts = apply_hosts(mesh, None, "model=4")
    assert axis_spans(fixed, fixed_hosts)["model"] == "dcn"
    # A device order no hybrid layout gives: steps that cross at some positions only.
    odd = Mesh.from_dict({"data": 2, "model": 4}, (0, 1, 2, 4, 3, 5, 6, 7))
    # hosts [[0, 0, 0, 1], [0, 1, 1, 1]]
    assert axis_steps(odd, Hosts(2, 8), "model") == ["mixed", "stays", "mixed"]
    assert "at some positions" in mesh_warnings(odd, Hosts(2, 8))[0]


def test_with_the_collectives_known_only_a_busy_axis_is_warned_and_a_fix_says_what_crosses():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    hosts = Hosts(2, 8)
    assert mesh_warnings(mesh, hosts, busy=[("model",)]) == []
    (line,) = mesh_warnings(mesh, hosts, busy=[("data",), ("model",)])
    assert "--dcn model=2 keeps data within each host (then collectives over model cross" in line
    # A collective over both axes crosses hosts already: the fix is not said to worsen it.
    (line,) = mesh_warnings(mesh, hosts, busy=[("data", "model")])
    assert line.endswith("--dcn model=2 keeps data within each host")
    # Many steps are counted rather than listed.
    (line,) = mesh_warnings(Mesh.from_dict({"data": 16, "model": 2}), Hosts(2, 32))
    assert "14 of the 15 steps (0→1, 1→2 ... 14→15) stay on a host; step 7→8 crosses" in line
