"""Uneven shardings padded as XLA pads them: tile counts read off JAX shardings, padded
shapes, zero padding on the way in and the real part on the way out."""

import jax
import numpy as np
from jax._src import sharding_impls
from jax._src.lib import xla_client as xc
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.run.padding import pad, padded_shape, real_piece, tile_counts, unpad


def _gspmd(text: str) -> sharding_impls.GSPMDSharding:
    devices = xc.DeviceList(tuple(jax.devices()[:8]))
    return sharding_impls.GSPMDSharding(devices, xc.HloSharding.from_string(text))


def test_tile_counts_are_the_array_dims_of_the_tile_assignment():
    assert tile_counts(_gspmd("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"), 2) == (2, 1)
    assert tile_counts(_gspmd("{devices=[2,4]<=[8]}"), 2) == (2, 4)
    assert tile_counts(_gspmd("{replicated}"), 3) == (1, 1, 1)
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
    assert tile_counts(NamedSharding(mesh, P(None, "model")), 2) == (1, 4)
    assert tile_counts(jax.sharding.SingleDeviceSharding(jax.devices()[0]), 1) == (1,)


def test_a_dim_that_does_not_divide_rounds_up_to_whole_tiles():
    assert padded_shape((3, 32), (2, 1)) == (4, 32)
    assert padded_shape((3, 6), (2, 4)) == (4, 8)
    assert padded_shape((16, 8), (4, 2)) == (16, 8)
    assert padded_shape((), ()) == ()


def test_padding_is_zeros_after_the_data_and_unpad_takes_it_off():
    data = np.arange(6, dtype=np.float32).reshape(3, 2) + 1
    grown = pad(data, (4, 4))
    assert grown.shape == (4, 4) and grown.dtype == np.float32
    np.testing.assert_array_equal(grown[:3, :2], data)
    assert not grown[3:].any() and not grown[:, 2:].any()
    np.testing.assert_array_equal(unpad(grown, (3, 2)), data)
    assert pad(data, (3, 2)) is data


def test_a_tile_past_the_end_holds_only_padding():
    # 6 columns in 4 tiles of 2: the third is whole, the fourth all padding.
    assert real_piece([[0, 2], [4, 6]], (3, 6)) == ([[0, 2], [4, 6]], [0, 0])
    assert real_piece([[2, 4], [4, 6]], (3, 6)) == ([[2, 3], [4, 6]], [1, 0])
    assert real_piece([[2, 4], [6, 8]], (3, 6)) == ([[2, 3], [6, 6]], [1, 2])
