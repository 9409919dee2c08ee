"""How a torch_xla script sharded each tensor, for the capture hook: the API the
``xs.mark_sharding`` call came through (the script's own call, ``mark_sharding_with_gradients``,
FSDPv2's wrapper or its ``shard_output``, ``MpDeviceLoader``'s ``input_sharding``,
``distribute_tensor``) and the script's line.
"""

from __future__ import annotations

import os
import weakref

# The library functions through which a script shards a tensor without calling
# ``xs.mark_sharding`` itself, outermost first: (file name, function names, what the
# script wrote).
_APIS = (
    ("xla_sharding.py", ("mark_sharding_with_gradients",), "xs.mark_sharding_with_gradients"),
    ("spmd_fully_sharded_data_parallel.py", ("__init__",), "FSDPv2 (its parameters)"),
    (
        "spmd_fully_sharded_data_parallel.py",
        ("forward", "shard_output_impl"),
        "FSDPv2's shard_output",
    ),
    ("parallel_loader.py", (), "MpDeviceLoader(input_sharding=...)"),
    ("", ("distribute_tensor", "xla_distribute_tensor", "distribute_module"), "distribute_tensor"),
)


def via(frame, user) -> str:
    """How the script sharded the tensor: the outermost library API on the stack between
    ``frame`` (in ``xs.mark_sharding``) and the user's frame, else ``xs.mark_sharding``."""
    found = "xs.mark_sharding"
    while frame is not None and frame is not user:
        name = os.path.basename(frame.f_code.co_filename)
        function = frame.f_code.co_name
        for file, functions, api in _APIS:
            if (not file or name == file) and (not functions or function in functions):
                found = api
        frame = frame.f_back
    return found


# How each tensor the script keeps (a parameter) was sharded, by the tensor itself: an
# optimizer's in-place update gives it new torch_xla ids. Weak references: the hook must
# not keep a tensor alive (a live tensor is computed by the next sync, which would change
# its graph).
_origins: dict[int, tuple] = {}


def remember(t, origin: dict) -> None:
    """Note how ``t`` was sharded: ``origin`` holds the API (``via``) and the script's
    file and line."""
    try:
        ref = weakref.ref(t)
    except TypeError:
        return
    _origins[id(t)] = (ref, origin)


def origin_of(t) -> dict | None:
    """How and where the script sharded ``t`` (``remember``), or None."""
    held = _origins.get(id(t))
    if held is None or held[0]() is not t:
        return None
    return held[1]
