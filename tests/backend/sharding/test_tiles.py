"""Tile maps against JAX's devices_indices_map, PyTorch/XLA's layout, and by hand."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import NamedSharding

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.mesh import Mesh, parse_mesh
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec
from shardscope.backend.sharding.tiles import TileMap, torch_xla_tile_assignment
from tests.support.sharding_cases import jax_mesh, mesh_spec_rank


@st.composite
def cases(draw, max_devices: int = 64):
    """A random mesh (1-4 axes, device order), a spec with tuples and a shape."""
    mesh, spec, rank = draw(mesh_spec_rank(max_devices))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(rank))
    return mesh, spec, shape


def jax_ranges(mesh: Mesh, spec: Spec, shape: tuple[int, ...]) -> dict[int, list[list[int]]]:
    """JAX's map on the shape padded to a multiple of the shard count, clipped back."""
    shards = [math.prod(mesh.shape[a] for a in d.axes) for d in spec.padded(len(shape)).dims]
    padded = tuple(-(-n // s) * s for n, s in zip(shape, shards, strict=True))
    got = NamedSharding(jax_mesh(mesh), spec.to_jax()).devices_indices_map(padded)
    out = {}
    for dev, idx in got.items():
        out[dev.id] = [
            [min(sl.start or 0, n), min(n if sl.stop is None else sl.stop, n)]
            for sl, n in zip(idx, shape, strict=True)
        ]
    return out


@settings(max_examples=150, deadline=None)
@given(cases())
def test_tile_map_equals_jax_devices_indices_map(case):
    mesh, spec, shape = case
    tm = TileMap.build(mesh, spec, shape)
    ours = {int(k): v for k, v in tm.devices_json().items()}
    assert ours == jax_ranges(mesh, spec, shape)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_torch_xla_tile_assignment_equals_jax_style(case):
    mesh, spec, shape = case
    full = spec.padded(len(shape))
    assignment = torch_xla_tile_assignment(mesh, full)
    ours = TileMap.build(mesh, spec, shape).devices_json()
    assert TileMap.from_tile_assignment(shape, assignment).devices_json() == ours


@settings(max_examples=100, deadline=None)
@given(cases())
def test_tiles_group_replicas_and_cover_devices(case):
    mesh, spec, shape = case
    tm = TileMap.build(mesh, spec, shape)
    tiles = tm.tiles()
    devices = sorted(d for _, _, devs in tiles for d in devs)
    assert devices == sorted(mesh.device_order)
    assert all(len(devs) == tm.replication for _, _, devs in tiles)
    for _, rng, devs in tiles:
        assert all(tm.ranges(d) == rng for d in devs)


def test_uneven_dim_pads_like_xla():
    mesh = parse_mesh("x=4")
    tm = TileMap.build(mesh, parse_spec("x"), (5,))
    assert [tm.ranges(d) for d in range(4)] == [((0, 2),), ((2, 4),), ((4, 5),), ((5, 5),)]
    assert tm.is_uneven == (True,)
    assert tm.padding == (3,)
    assert tm.dims[0].tile == 2


def test_example_device_order_and_json():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    tm = TileMap.build(mesh, parse_spec("data,_"), (16, 32))
    assert tm.ranges(1) == ((8, 12), (0, 32))
    assert tm.ranges(2) == ((0, 4), (0, 32))
    data = tm.to_json()
    assert data["devices"]["6"] == [[4, 8], [0, 32]]
    assert data["tiles"][0] == {"index": [0, 0], "ranges": [[0, 4], [0, 32]], "devices": [0, 2]}
    assert data["dims"][0] == {"size": 16, "shards": 4, "tile": 4, "padding": 0, "uneven": False}
    assert "0,2" in tm.table()


def test_tuple_dim_is_major_to_minor():
    mesh = parse_mesh("a=2,b=2")
    tm = TileMap.build(mesh, Spec((DimSpec(("b", "a")),)), (8,))
    # b is major: device (a=1, b=0) at position 2 takes the second quarter.
    assert tm.ranges(2) == ((2, 4),)
    assert tm.ranges(1) == ((4, 6),)


def test_torch_xla_layout_shape():
    mesh = parse_mesh("data=4,model=2")
    ta = torch_xla_tile_assignment(mesh, Spec.of(None, "model"))
    assert ta.shape == (1, 2, 4)
    assert ta[0, 1].tolist() == [1, 3, 5, 7]


def test_rank_zero_and_unknown_device():
    tm = TileMap.build(parse_mesh("x=2"), Spec(), ())
    assert tm.devices_json() == {"0": [], "1": []}
    with pytest.raises(SpecError, match="pick one of its device ids"):
        tm.ranges(9)


def test_from_tile_assignment_rejects_low_rank():
    with pytest.raises(SpecError, match="one tile dim per tensor dim"):
        TileMap.from_tile_assignment((4, 4), np.arange(4))


def test_empty_shards_count_devices_holding_only_padding():
    mesh = parse_mesh("data=4,model=2")
    assert TileMap.build(mesh, parse_spec("data,model"), (3, 8)).empty_shards == 2
    assert TileMap.build(mesh, parse_spec("data,model"), (16, 8)).empty_shards == 0
    assert TileMap.build(mesh, parse_spec(""), ()).empty_shards == 0
