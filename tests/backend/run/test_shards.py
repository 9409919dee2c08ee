"""Shard records against jax's own addressable_shards; replica checks; relative error."""

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.run.shards import (
    ValueBudget,
    checksum,
    heat_grid,
    index_ranges,
    max_relative_error,
    preview,
    replica_mismatches,
    shard_records,
    tensor_report,
)


def test_records_equal_addressable_shards():
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("data", "model"))
    data = np.arange(16 * 6, dtype=np.float32).reshape(16, 6)
    array = jax.device_put(data, NamedSharding(mesh, P("data", None)))
    records = shard_records(array, ValueBudget())
    assert [r["device"] for r in records] == list(range(8))
    for r in records:
        shard = next(s for s in array.addressable_shards if s.device.id == r["device"])
        rows = shard.index[0].indices(16)
        assert r["index"] == [[rows[0], rows[1]], [0, 6]]
        assert r["shape"] == list(shard.data.shape) == [4, 6]
        assert r["checksum"] == checksum(data[rows[0] : rows[1]])
        assert r["padding"] == [0, 0]
    by_device = {r["device"]: r for r in records}
    for r in records:
        # the two model replicas of a row block send its values once
        source = by_device[r["values_from"]] if r["values_from"] is not None else r
        assert source["values"] == data[r["index"][0][0] : r["index"][0][1]].ravel().tolist()
        assert (r["values"] is None) == (r["values_from"] is not None)
    assert sum(r["values"] is not None for r in records) == 4
    assert replica_mismatches(records) == []


def test_values_stop_when_the_budget_is_spent():
    mesh = Mesh(np.array(jax.devices()[:4]), ("data",))
    array = jax.device_put(np.ones((8, 2), np.float32), NamedSharding(mesh, P("data", None)))
    records = shard_records(array, ValueBudget(10))
    # 4 values a shard: two fit in 10, the third does not
    assert [r["values"] is not None for r in records] == [True, True, False, False]
    assert all(r["values"] is None for r in shard_records(array))


def test_index_ranges_fill_open_slices():
    assert index_ranges((slice(None), slice(2, 4)), (8, 6)) == [[0, 8], [2, 4]]


def test_replicas_that_differ_are_named():
    records = [
        {"device": 0, "index": [[0, 4]], "shape": [4], "checksum": "aa", "values": None},
        {"device": 1, "index": [[0, 4]], "shape": [4], "checksum": "bb", "values": None},
        {"device": 2, "index": [[4, 8]], "shape": [4], "checksum": "cc", "values": None},
        {"device": 3, "index": [[4, 8]], "shape": [4], "checksum": "cc", "values": None},
    ]
    assert replica_mismatches(records) == [[0, 1]]


def test_relative_error():
    expected = np.array([1.0, -4.0, 2.0])
    assert max_relative_error(expected, expected) == 0.0
    assert max_relative_error(np.array([1.0, -4.0, 3.0]), expected) == 0.25
    assert max_relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert max_relative_error(np.array([np.nan, 1.0]), np.array([0.0, 1.0])) == float("inf")
    assert max_relative_error(np.ones(2), np.ones(3)) == float("inf")
    assert max_relative_error(np.array([True, False]), np.array([True, True])) == 0.5


def test_an_empty_piece_carries_no_values_in_its_shape():
    # A tile past an uneven dimension's end holds only padding: no elements of its own.
    assert preview(np.zeros((2, 0), np.float32)) == ([], [2, 0])
    assert heat_grid([], [2, 0]).shape == (2, 0)


def test_large_shards_carry_block_means_capped_at_64_a_side():
    from shardscope.backend.run.shards import MAX_SIDE, MAX_VALUES, heat_grid, pooled, preview

    rng = np.random.default_rng(0)
    data = rng.normal(size=(130, 200)).astype(np.float32)
    values, shape = preview(data)
    assert len(values) <= MAX_VALUES and max(shape) <= MAX_SIDE
    # rows in blocks of 3 (the last one short), columns in blocks of 4
    assert shape == [44, 50]
    grid = np.array(values).reshape(shape)
    assert grid[0, 0] == pytest.approx(float(data[:3, :4].astype(np.float64).mean()))
    assert grid[-1, -1] == pytest.approx(float(data[129:, 196:].astype(np.float64).mean()))
    np.testing.assert_allclose(heat_grid(values, shape), grid)
    # small shards carry every value, in their own shape; 3-D ones draw rows of the last dim
    small = np.arange(24.0).reshape(2, 3, 4)
    values, shape = preview(small)
    assert shape == [2, 3, 4] and values == small.ravel().tolist()
    np.testing.assert_array_equal(heat_grid(values, shape), small.reshape(6, 4))
    # NaN and infinities are left out of a block's mean; an all-NaN block stays NaN
    holes = np.ones((128, 2))
    holes[0:2, 0] = np.nan
    holes[0:2, 1] = np.inf
    out = pooled(holes)
    assert out.shape == (64, 2) and np.isnan(out[0]).all() and (out[1:] == 1).all()


def test_a_large_shard_takes_its_block_means_from_the_budget():
    data = np.ones((256, 256), dtype=np.float32)
    array = jax.device_put(data)
    (record,) = shard_records(array, ValueBudget(5000))
    assert record["values_shape"] == [64, 64] and len(record["values"]) == 4096
    assert set(record["values"]) == {1.0}
    (record,) = shard_records(array, ValueBudget(100))
    assert record["values"] is None and record["values_shape"] is None


def test_a_padded_array_reports_each_tiles_real_part_and_its_padding():
    # 3 rows split 2 ways are held as 4: the second tile is row 2 and a row of padding,
    # NaN here, which neither the records nor the error may see.
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
    data = np.arange(3 * 4, dtype=np.float32).reshape(3, 4)
    held = np.concatenate([data, np.full((1, 4), np.nan, np.float32)])
    array = jax.device_put(held, NamedSharding(mesh, P("data", None)))
    entry = tensor_report("w", array, "data,_", "", data, ValueBudget(), (3, 4))
    assert entry["shape"] == [3, 4] and entry["max_rel_error"] == 0.0
    by_device = {r["device"]: r for r in entry["shards"]}
    first, last = by_device[0], by_device[4]
    assert (first["index"], first["shape"], first["padding"]) == ([[0, 2], [0, 4]], [2, 4], [0, 0])
    assert (last["index"], last["shape"], last["padding"]) == ([[2, 3], [0, 4]], [1, 4], [1, 0])
    assert last["checksum"] == checksum(data[2:3]) and last["values"] == data[2].tolist()
    assert entry["replica_mismatches"] == []
