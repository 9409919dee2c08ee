"""Shard records against jax's own addressable_shards; replica checks; relative error."""

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.run.shards import (
    ValueBudget,
    checksum,
    index_ranges,
    max_relative_error,
    replica_mismatches,
    shard_records,
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
        assert r["values"] == data[rows[0] : rows[1]].ravel().tolist()
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
