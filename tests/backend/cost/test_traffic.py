"""``backend.cost.traffic``: which compiled collectives cross hosts, checked against real
compiles on fake CPU devices of a data=2, model=4 mesh laid over 2 hosts both ways."""

from __future__ import annotations

import pytest

from shardscope.backend.cost.traffic import crossing_warnings, mark_crossing, step_traffic
from shardscope.backend.run.compiled import propagate_compiled
from shardscope.backend.sharding.hosts import Hosts, apply_hosts
from shardscope.backend.sharding.mesh import Mesh
from tests.support.compile_oracle import loaded
from tests.support.inputs import PROGRAMS

SOURCE = str(PROGRAMS / "hosts_data_model.py")
MESH = Mesh.from_dict({"data": 2, "model": 4})


@pytest.fixture(scope="module")
def blocks():
    # --hosts 2 without --dcn: host 0 owns devices 0..3, the first row of the mesh.
    mesh, hosts = apply_hosts(MESH, 2, None)
    return propagate_compiled(loaded(SOURCE), mesh), mesh, hosts


@pytest.fixture(scope="module")
def along_model():
    # --dcn model=2: the hosts lie along model, as the warning on ``blocks`` suggests.
    mesh, hosts = apply_hosts(MESH, None, "model=2")
    return propagate_compiled(loaded(SOURCE), mesh), mesh, hosts


def _by_axes(result, hosts):
    marked = mark_crossing(result.compiled_collectives, hosts)
    assert sorted(c.axes for c in marked) == [("data",), ("model",)]
    return {c.axes[0]: c for c in marked}


def test_the_crossing_is_the_compiled_replica_groups(blocks, along_model):
    result, _, hosts = blocks
    by = _by_axes(result, hosts)
    assert by["model"].device_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert not by["model"].crosses_hosts
    assert by["data"].crosses_hosts
    result, mesh, hosts = along_model
    assert mesh.device_order == (0, 1, 4, 5, 2, 3, 6, 7)
    by = _by_axes(result, hosts)
    assert by["model"].crosses_hosts and not by["data"].crosses_hosts
    assert all({d // 4 for d in g} in ({0}, {1}) for g in by["data"].device_groups)


def test_bytes_within_and_across_add_up_to_all_that_is_sent(blocks, along_model):
    for result, _, hosts in (blocks, along_model):
        for c in result.compiled_collectives:
            within, across = step_traffic(c, hosts)
            assert within + across == c.bytes * sum(len(g) for g in c.device_groups)
            assert (across > 0) == hosts.crosses(c.device_groups)
    result, _, hosts = blocks
    by = _by_axes(result, hosts)
    # data's groups are pairs {k, k+4}: both hops of each ring cross.
    assert step_traffic(by["data"], hosts) == (0, by["data"].bytes * 8)
    assert step_traffic(by["data"], Hosts(1, 8)) == (by["data"].bytes * 8, 0)


def test_a_crossing_another_layout_avoids_is_warned_with_that_layout(blocks, along_model):
    result, mesh, hosts = blocks
    (line,) = crossing_warnings(result.compiled_collectives, mesh, hosts)
    data = _by_axes(result, hosts)["data"]
    assert line.startswith(f"all-reduce over data (line {data.line}, jit(program)/")
    assert f"crosses hosts: {data.bytes * 8} B per step across hosts" in line
    assert "--dcn model=2" in line and "all-reduce over model would cross instead" in line
    # The suggested layout, compiled for real, keeps data's all-reduce within each host;
    # model's then crosses, and it is warned with the layout back.
    result, mesh, hosts = along_model
    assert not _by_axes(result, hosts)["data"].crosses_hosts
    (line,) = crossing_warnings(result.compiled_collectives, mesh, hosts)
    assert line.startswith("all-reduce over model (line 13, ") and "--dcn data=2" in line
    assert crossing_warnings(result.compiled_collectives, mesh, Hosts(1, 8)) == []


def test_nothing_is_warned_where_no_layout_keeps_the_axes_on_a_host(blocks):
    result, mesh, _ = blocks
    # Eight hosts of one device: every group crosses, and no layout helps.
    assert crossing_warnings(result.compiled_collectives, mesh, Hosts(8, 8)) == []
