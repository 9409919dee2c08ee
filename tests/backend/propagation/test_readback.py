"""Reading back onto the program graph: calls inlined as XLA does before Shardy runs."""

from shardscope.backend.propagation.propagate import prepare
from shardscope.backend.propagation.readback import inline_calls
from tests.support.compile_oracle import loaded


def test_calls_are_inlined_like_xla():
    prep = prepare(loaded("tests/inputs/corpus/cond_call.py"))
    assert "func.call" not in str(prep.module)
    assert inline_calls(prep.module, prep.index) == 0
