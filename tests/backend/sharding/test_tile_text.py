"""Texts about tiles and their devices: grid labels, device lists, summaries, captions."""

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.backend.sharding.tile_text import (
    describe_devices,
    describe_tile,
    slice_label,
    tile_label,
    tile_map_summary,
)
from shardscope.backend.sharding.tiles import TileMap


def tile_map(mesh: str, spec: str, shape):
    return TileMap.build(parse_mesh(mesh), parse_spec(spec), shape)


def test_tile_labels_stay_short_and_exact():
    assert tile_label((5,)) == "5"
    assert tile_label((0, 2, 4, 6)) == "0,2,4,6"
    assert tile_label(tuple(range(8))) == "0-7"
    assert tile_label((0, 2, 4, 6, 8, 10)) == "0,2,\u2026(6)"


def test_device_lists_count_and_shorten():
    assert describe_devices(()) == "no device"
    assert describe_devices((5,)) == "device 5"
    assert describe_devices([0, 4]) == "2 devices 0, 4"
    long = describe_devices(range(20), limit=3)
    assert long == "20 devices 0, 1, 2 \u2026 (+17)"


def test_one_tile_described():
    text = describe_tile((1, 0), ((16, 32), (0, 0)), (2,))
    assert text == "tile (1, 0) \u00b7 device 2 \u00b7 d0[16:32) d1[0:0) empty"


def test_summary_of_replicated_uneven_and_empty_tiles():
    assert tile_map_summary(tile_map("data=4,model=2", "data,model", (64, 32))) == "8 tiles"
    assert (
        tile_map_summary(tile_map("data=4,model=2", "_,model", (64, 32)))
        == "2 tiles \u00b7 each on 4 devices"
    )
    uneven = tile_map_summary(tile_map("data=4,model=2", "data,model", (3, 8)))
    assert uneven == "8 tiles \u00b7 uneven: dim 0 pads 1 \u00b7 2 empty shards"
    assert tile_map_summary(tile_map("data=4", "", ())) == "1 tile \u00b7 each on 4 devices"


def test_slice_caption_clips_to_the_real_size():
    dims = tile_map("data=4,model=2", "data,model", (10, 8)).dims
    assert slice_label(0, dims[0], 1) == "dim 0: tile 2/4  [3:6)"
    assert slice_label(0, dims[0], 3) == "dim 0: tile 4/4  [9:10)"
