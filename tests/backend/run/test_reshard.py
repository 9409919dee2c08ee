"""Reshard plans: free, local slices, real traffic with bytes; checked with jax.device_put."""

import jax
import numpy as np
import pytest
from jax.sharding import Mesh as JaxMesh
from jax.sharding import NamedSharding

from shardscope.backend.run.reshard import check_reshard, plan_reshard
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import parse_spec

MESH = Mesh.from_dict({"data": 4, "model": 2})
SHAPE = (16, 32)
CASES = [
    ("data,_", "data,_"),
    ("_,_", "data,_"),
    ("data,model", "data,_"),
    ("data,_", "_,_"),
    ("data,_", "model,_"),
    ("data,model", "model,data"),
    ("_,data", "data,_"),
]


def _plan(a, b, shape=SHAPE):
    return plan_reshard(MESH, parse_spec(a), parse_spec(b), shape)


def test_kinds_and_bytes():
    assert _plan("data,_", "data,_").kind == "free"
    assert _plan("data,_", "data,_").moves == ()
    assert _plan("_,_", "data,_").kind == "local"
    assert {s.action for s in _plan("_,_", "data,_").steps} == {"slice"}
    gather = _plan("data,_", "_,_")
    assert gather.kind == "traffic"
    # every device receives the 3 quarters it lacks: 12 rows of 32 float32
    assert gather.bytes == 8 * 12 * 32 * 4
    assert {m.target for m in gather.moves} == set(range(8))


def test_replicated_sources_share_the_sending():
    gather = _plan("data,_", "_,_")
    sent = {}
    for m in gather.moves:
        sent[m.source] = sent.get(m.source, 0) + m.bytes
    assert sorted(sent.values()) == [3 * 4 * 32 * 4] * 8


@pytest.mark.parametrize(("a", "b"), CASES)
def test_each_device_ends_with_exactly_its_new_piece(a, b):
    plan = _plan(a, b)
    for step in plan.steps:
        want = np.zeros(SHAPE, dtype=int)
        box = tuple(slice(lo, hi) for lo, hi in step.after)
        want[box] = 1
        have = np.zeros(SHAPE, dtype=int)
        if step.action in ("same", "slice", "receive"):
            own = tuple(slice(lo, hi) for lo, hi in step.before)
            have[own] = 1
        have *= want  # what it keeps of its own piece
        for m in plan.moves:
            if m.target == step.device:
                part = tuple(slice(lo, hi) for lo, hi in m.index)
                assert (have[part] == 0).all(), "a part it already has was sent again"
                have[part] += 1
        assert np.array_equal(have, want), (a, b, step)


@pytest.mark.parametrize(("a", "b"), CASES)
def test_the_new_pieces_are_jax_device_puts(a, b):
    mesh = JaxMesh(np.array(jax.devices()[:8]).reshape(4, 2), ("data", "model"))
    data = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE)
    source = NamedSharding(mesh, parse_spec(a).to_jax())
    moved = jax.device_put(
        jax.device_put(data, source), NamedSharding(mesh, parse_spec(b).to_jax())
    )
    after = {s.device: s.after for s in _plan(a, b).steps}
    for shard in moved.addressable_shards:
        index = tuple(s.indices(n)[:2] for s, n in zip(shard.index, SHAPE, strict=True))
        assert after[shard.device.id] == index


@pytest.mark.slow
def test_a_real_device_put_in_a_worker_matches_the_plan():
    devices = check_reshard(MESH, parse_spec("data,model"), parse_spec("model,data"), SHAPE)
    after = {s.device: s.after for s in _plan("data,model", "model,data").steps}
    assert set(devices) == set(range(8))
    for device, got in devices.items():
        assert tuple(tuple(r) for r in got["index"]) == after[device]
        assert got["data_ok"]


def test_json_form():
    data = _plan("data,_", "model,_").to_json()
    assert data["kind"] == "traffic" and data["source"] == "data,_"
    assert set(data["moves"][0]) == {"source", "target", "index", "bytes"}
