"""Predicted and compiled collectives matched per source op."""

from shardscope.backend.run.match import match, operand_sources
from shardscope.backend.run.result import CompiledCollective, PredictedRef

# The combined all-reduce of example:transformer's compiled training step (shortened).
COMBINED = (
    "jit(train_step)/(transpose(jvp(head))/dot_general:transpose(jvp())/scatter-add:"
    "transpose(jvp(layer_0))/attn/reduce_sum)"
)


def test_a_combined_name_lists_each_operand_op():
    assert operand_sources(COMBINED) == [
        "jit(train_step)/transpose(jvp(head))/dot_general",
        "jit(train_step)/transpose(jvp())/scatter-add",
        "jit(train_step)/transpose(jvp(layer_0))/attn/reduce_sum",
    ]
    assert operand_sources("jit(f)/layer2/dot_general") == ["jit(f)/layer2/dot_general"]
    assert operand_sources("") == []


def _compiled(kind, source, sources=()):
    return CompiledCollective(kind, None, (4,), 16, source, 3, (), sources=tuple(sources))


def _predicted(kind, source):
    return PredictedRef(kind, ("data",), 1, source, 3, 16)


def test_matched_per_op_and_kind_with_leftovers_on_both_sides():
    compiled = [
        _compiled("all-reduce", "jit(f)/a", ["jit(f)/a"]),
        _compiled("all-gather", "jit(f)/b", ["jit(f)/b"]),
        _compiled("all-reduce", "jit(f)/(c:d)", ["jit(f)/c", "jit(f)/d"]),
    ]
    predicted = [
        _predicted("all-reduce", "jit(f)/a"),
        _predicted("all-reduce", "jit(f)/b"),  # same op, another kind: not a match
        _predicted("all-reduce", "jit(f)/c"),
        _predicted("all-reduce", "jit(f)/d"),
        _predicted("collective-permute", "jit(f)/e"),
    ]
    out, left = match(compiled, predicted)
    assert [len(c.predicted) for c in out] == [1, 0, 2]
    assert out[2].predicted == (predicted[2], predicted[3])
    assert left == [predicted[1], predicted[4]]
