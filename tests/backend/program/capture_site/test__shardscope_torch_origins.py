"""How a torch_xla script sharded a tensor: the library API between the
``xs.mark_sharding`` call and the script's frame, and the tensor's origin kept by a weak
reference, never keeping the tensor alive."""

import gc
import types
import weakref

import pytest

from tests.support.capture_site import load_site_module


@pytest.fixture
def origins(monkeypatch):
    return load_site_module("_shardscope_torch_origins", monkeypatch)


def _stack(*frames):
    """Frames (file, function), innermost first, linked as a call stack."""
    outer = None
    for file, function in reversed(frames):
        code = types.SimpleNamespace(co_filename=file, co_name=function)
        outer = types.SimpleNamespace(f_code=code, f_back=outer)
    return outer


def _at(frame, depth):
    for _ in range(depth):
        frame = frame.f_back
    return frame


def test_the_outermost_library_api_below_the_scripts_frame_names_the_call(origins):
    lib = "/venv/site-packages/torch_xla/distributed/spmd/"
    stack = _stack(
        (lib + "xla_sharding.py", "mark_sharding"),
        (lib + "xla_sharding.py", "_aot_mark_sharding"),
        (lib + "xla_sharding.py", "mark_sharding_with_gradients"),
        ("/home/u/train.py", "forward"),
        (
            "/venv/site-packages/torch_xla/experimental/spmd_fully_sharded_data_parallel.py",
            "__init__",
        ),
    )
    user = _at(stack, 3)
    assert origins.via(stack, user) == "xs.mark_sharding_with_gradients"
    fsdp = _stack(
        (lib + "xla_sharding.py", "mark_sharding"),
        (
            "/venv/site-packages/torch_xla/experimental/spmd_fully_sharded_data_parallel.py",
            "__init__",
        ),
        ("/home/u/train.py", "__init__"),
    )
    assert origins.via(fsdp, _at(fsdp, 2)) == "FSDPv2 (its parameters)"
    plain = _stack((lib + "xla_sharding.py", "mark_sharding"), ("/home/u/train.py", "<module>"))
    assert origins.via(plain, _at(plain, 1)) == "xs.mark_sharding"
    # a loader's thread has no frame of the script's
    loader = _stack(
        (lib + "xla_sharding.py", "mark_sharding"),
        ("/venv/site-packages/torch_xla/distributed/parallel_loader.py", "_worker"),
    )
    assert origins.via(loader, None) == "MpDeviceLoader(input_sharding=...)"


class Tensor:
    """Stands in for a tensor: weakly referable."""


def test_an_origin_is_kept_for_the_tensor_alone_and_never_keeps_it_alive(origins):
    t, other = Tensor(), Tensor()
    origins.remember(t, {"via": "FSDPv2 (its parameters)", "file": "train.py", "line": 78})
    assert origins.origin_of(t) == {
        "via": "FSDPv2 (its parameters)",
        "file": "train.py",
        "line": 78,
    }
    assert origins.origin_of(other) is None
    # the record holds no reference: the tensor goes when the script drops it
    gone = weakref.ref(t)
    del t
    gc.collect()
    assert gone() is None
    # a new object at the old address is not taken for the tensor that was there
    assert all(origins.origin_of(Tensor()) is None for _ in range(100))
    origins.remember(1, {"via": "xs.mark_sharding"})  # not weakly referable: nothing kept
    assert origins.origin_of(1) is None
