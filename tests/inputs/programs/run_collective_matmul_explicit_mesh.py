"""run_collective_matmul_explicit with MESH the shard_map's own mesh (jax.make_mesh,
Explicit axes) rather than a dict."""

import runpy
from pathlib import Path

import jax

_program = runpy.run_path(str(Path(__file__).with_name("run_collective_matmul_explicit.py")))

PROGRAM = _program["PROGRAM"]
EXAMPLE_ARGS = _program["EXAMPLE_ARGS"]
MESH = jax.make_mesh((2, 4), ("data", _program["AXIS"]))
SPECS = _program["SPECS"]
