"""The mixture-of-experts layer of ``explain_moe`` on a ``jax.make_mesh`` mesh with an
Auto axis (rather than a dict): a module-level shard_map without mesh=, all_to_all there
and back, and the gradient of the loss."""

import runpy
from pathlib import Path

import jax
from jax.sharding import AxisType

_moe = runpy.run_path(str(Path(__file__).with_name("explain_moe.py")))

PROGRAM = _moe["PROGRAM"]
EXAMPLE_ARGS = _moe["EXAMPLE_ARGS"]
SPECS = _moe["SPECS"]
MESH = jax.make_mesh((4,), ("expert",), axis_types=(AxisType.Auto,))
