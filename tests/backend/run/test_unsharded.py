"""``unsharded_module``: a module's shardings taken off, in Shardy's form and GSPMD's."""

import pytest

from shardscope.backend.program.load import load_program
from shardscope.backend.run.unsharded import ManualModule, unsharded_module
from tests.support.inputs import MLIR

_SHARDINGS = ("sdy.", "mhlo.sharding", "@Sharding")


@pytest.mark.parametrize("name", ["sdy", "sdy_constraint", "gspmd", "gspmd_constraint"])
def test_every_sharding_is_taken_off_and_the_ops_stay(name):
    text = (MLIR / f"{name}.mlir").read_text()
    plain = unsharded_module(text)
    body = [line for line in plain.splitlines() if not line.startswith("#loc")]
    assert not [line for line in body if any(s in line for s in _SHARDINGS)], body
    kept = load_program_text(plain)
    ops = {op.name for op in kept.graph.ops}
    assert "stablehlo.dot_general" in ops and "stablehlo.tanh" in ops
    # Locations stay: the ops still point at the lines of the file that made them.
    assert "make_mlir.py" in plain


def test_a_shard_map_has_no_unsharded_module():
    text = (MLIR / "sdy.mlir").read_text()
    manual = text.replace(
        "%1 = stablehlo.tanh %0",
        "%1 = stablehlo.custom_call @SPMDFullToShardShape(%0) : "
        "(tensor<16x8xf32>) -> tensor<16x8xf32>\n    %9 = stablehlo.tanh %0",
        1,
    )
    with pytest.raises(ManualModule, match="custom_call @SPMDFullToShardShape"):
        unsharded_module(manual)


def load_program_text(text: str):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plain.mlir"
        path.write_text(text)
        return load_program(str(path))
