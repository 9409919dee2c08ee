"""``backend.cost.traffic``: which compiled collectives cross hosts, checked against real
compiles on fake CPU devices of a data=2, model=4 mesh laid over 2 hosts both ways."""

from __future__ import annotations

import dataclasses

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.cost.price import ESTIMATE, price, price_compiled
from shardscope.backend.cost.traffic import (
    apply_host_layout,
    crossing_warnings,
    step_traffic,
    traffic_lines,
    within_hosts_split,
)
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.result import mark_crossing
from shardscope.backend.sharding.hosts import Hosts, apply_hosts
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.units import bytes_text, seconds_text
from tests.support.compile_oracle import loaded
from tests.support.inputs import PROGRAMS

SOURCE = str(PROGRAMS / "hosts_data_model.py")
MESH = Mesh.from_dict({"data": 2, "model": 4})


@pytest.fixture(scope="module")
def blocks():
    # --hosts 2 without --dcn: host 0 owns devices 0..3, the first row of the mesh.
    mesh, hosts = apply_hosts(MESH, 2, None)
    return analyse(loaded(SOURCE), mesh), mesh, hosts


@pytest.fixture(scope="module")
def along_model():
    # --dcn model=2: the hosts lie along model, as the warning on ``blocks`` suggests.
    mesh, hosts = apply_hosts(MESH, None, "model=2")
    return analyse(loaded(SOURCE), mesh), mesh, hosts


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


def test_with_hosts_a_crossing_collective_is_priced_on_dcn(blocks):
    result, _, hosts = blocks
    by = _by_axes(result, hosts)
    pricing = price(result.compiled_collectives, result.memory, "tpu-v5e", hosts=hosts)
    costs = {c.axes[0]: c for c in pricing.collectives}
    assert (costs["data"].link, costs["model"].link) == ("DCN", "ICI")
    assert costs["data"].crosses_hosts and not costs["model"].crosses_hosts
    # data: N = 2, S = 64 B (a (4, 4) f32 piece), DCN 200 Gbps per host / 8 chips, a = 10 us.
    s = by["data"].result_bytes
    assert s == 4 * 4 * 4
    assert costs["data"].seconds == pytest.approx(2 * (10e-6 + s / (2 * 25e9 / 8)), rel=1e-12)
    assert pricing.hosts == 2 and "2 hosts of 4 devices" in pricing.estimate
    assert "process_is_granule=True" in pricing.to_json()["estimate"]
    assert pricing.step_bytes_across_hosts == step_traffic(by["data"], hosts)[1] == 512
    assert pricing.step_bytes_within_hosts == step_traffic(by["model"], hosts)[0]
    assert pricing.step_seconds_slow_link == costs["data"].seconds_per_call
    assert pricing.step_seconds_fast_link == costs["model"].seconds_per_call
    assert pricing.step_seconds_fast_link + pricing.step_seconds_slow_link == pytest.approx(
        pricing.step_seconds, rel=1e-12
    )
    # Without hosts both stay in tpu-v5e's 256-chip domain: today's pricing, all within.
    plain = price(result.compiled_collectives, result.memory, "tpu-v5e")
    assert {c.link for c in plain.collectives} == {"ICI"} and plain.hosts == 1
    assert plain.step_bytes_across_hosts == 0
    assert plain.step_bytes_within_hosts == pricing.step_bytes_within_hosts + 512
    assert plain.estimate == ESTIMATE and traffic_lines(plain) == []


def test_a_collective_run_in_a_loop_sends_its_bytes_each_run(blocks):
    result, _, hosts = blocks
    data = _by_axes(result, hosts)["data"]
    looped = dataclasses.replace(data, runs_per_call=3)
    (cost,) = price([looped], None, "tpu-v5e", hosts=hosts).collectives
    assert cost.bytes_across_hosts == 3 * 512 == step_traffic(looped, hosts)[1]


def test_traffic_lines_total_and_name_each_crossing_collective(blocks):
    result, _, hosts = blocks
    pricing = price_compiled(result.propagation, result.compile, "tpu-v5e", hosts)
    head, how, crossing = traffic_lines(pricing)
    assert "process_is_granule=True" in how and "priced on DCN, the others on ICI" in how
    assert head.startswith("traffic per step on 2 hosts")
    assert "across hosts: 512 B (1 collective on DCN, 20.0 µs)" in head
    within = pricing.step_bytes_within_hosts
    fast = seconds_text(pricing.step_seconds_fast_link)
    assert fast.startswith("6.") and fast.endswith(" µs")
    assert f"within hosts: {within} B (1 collective on ICI, {fast})" in head
    assert (
        crossing
        == "  crosses hosts: #1 all-reduce over data: 512 B across, 0 B within, 20.0 µs on DCN"
    )
    assert bytes_text(12 * 2**20) == "12.0 MiB" and seconds_text(4.1e-3) == "4.10 ms"


def _laid(result, hosts):
    traffic, pricing = apply_host_layout(result.propagation, result.compile, hosts, "tpu-v5e")
    return result.with_parts(traffic=traffic, pricing=pricing)


def test_apply_host_layout_marks_prices_and_warns(blocks, along_model):
    result, _, hosts = blocks
    laid = _laid(result, hosts)
    assert laid.hosts == 2 and laid.pricing.hosts == 2
    assert [c.crosses_hosts for c in laid.compiled_collectives] == [
        c.crosses_hosts for c in mark_crossing(result.compiled_collectives, hosts)
    ]
    assert laid.predicted_crossing == ()  # user psums: Shardy predicts none
    # data lies wholly across hosts (no axis spans both): only the crossing is warned.
    assert list(laid.traffic.warnings) == crossing_warnings(
        laid.compiled_collectives, laid.mesh, hosts
    )
    assert laid.warnings[-len(laid.traffic.warnings) :] == laid.traffic.warnings
    assert laid.to_json()["hosts"] == 2
    # model=2: model spans both links, and its all-reduce crosses.
    result, _, hosts = along_model
    added = _laid(result, hosts).traffic.warnings
    assert [w.split(" ", 2)[:2] for w in added] == [["axis", "model"], ["all-reduce", "over"]]
    # One host is today's answer.
    single = _laid(result, None)
    assert single.hosts == 1 and single.predicted_crossing is None
    assert single.pricing == price_compiled(result.propagation, result.compile, "tpu-v5e")
    assert single.to_json()["hosts"] == 1


def test_a_layout_of_another_mesh_is_refused(blocks):
    result, _, _ = blocks
    with pytest.raises(ShardscopeError, match="lay the hosts over its 8 devices"):
        apply_host_layout(result.propagation, result.compile, Hosts(2, 16), "tpu-v5e")


def test_where_every_collective_crosses_no_traffic_is_claimed_for_the_fast_link():
    # 4 hosts of 2 devices: the all-reduce over model (4 devices) and the one over data
    # (devices 4 apart) both cross hosts; model's also sends within each host
    mesh, hosts = apply_hosts(MESH, 4, None)
    result = analyse(loaded(SOURCE), mesh)
    pricing = price_compiled(result.propagation, result.compile, "tpu-v5e", hosts)
    assert all(c.crosses_hosts for c in pricing.collectives)
    staying, beside = within_hosts_split(pricing)
    assert staying == 0 and beside == pricing.step_bytes_within_hosts > 0
    head = traffic_lines(pricing)[0]
    assert f"which also send {bytes_text(beside)} within hosts" in head
    assert head.endswith("within hosts: none (no collective stays within hosts)")


def test_within_hosts_counts_the_collectives_that_stay_there(along_model):
    result, _, hosts = along_model
    pricing = price_compiled(result.propagation, result.compile, "tpu-v5e", hosts)
    staying, beside = within_hosts_split(pricing)
    assert staying + beside == pricing.step_bytes_within_hosts
    stays = [c for c in pricing.collectives if not c.crosses_hosts]
    assert staying == sum(c.bytes_within_hosts for c in stays)
    fast = seconds_text(pricing.step_seconds_fast_link)
    assert (
        f"within hosts: {bytes_text(staying)} (1 collective on ICI, {fast})"
        in (traffic_lines(pricing)[0])
    )
