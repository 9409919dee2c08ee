"""How views name a program value (plain text, no Qt needed)."""

from shardscope.backend.program.graph import Value
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.value_text import badge_tooltip, facts_text, type_text


def value(shape, name="params['w1']"):
    return Value(
        id=7,
        ssa="%arg0",
        shape=shape,
        dtype="f32",
        role="arg",
        function="main",
        display_name=name,
    )


def test_type_text():
    assert type_text(value((32, 64))) == "f32[32x64]"
    assert type_text(value(())) == "f32[]"
    assert type_text(value(None)) == "f32"


def test_facts_text():
    assert facts_text(value((16, 32))) == "arg \u00b7 f32[16, 32]"
    assert facts_text(value(())) == "arg \u00b7 f32[]"
    assert facts_text(value(None)) == "arg \u00b7 f32n/a"


def test_badge_tooltip():
    tip = badge_tooltip(value((16, 32)), Spec.of("data", None), "user")
    assert tip == (
        "params['w1']  f32[16x32]\ndata,_  (user)\ndrop a mesh axis on a dimension to shard it"
    )
    scalar = badge_tooltip(value((), "loss"), None, "none")
    assert scalar == "loss  f32[scalar]\nunknown until propagation  (none)"
