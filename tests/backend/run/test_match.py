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


def _at(kind, source, line, sources=None):
    return CompiledCollective(
        kind, None, (4,), 16, source, line, (), sources=tuple(sources or [source])
    )


def _ref(kind, source, line, op=1):
    return PredictedRef(kind, ("data",), op, source, line, 16)


def test_an_op_in_a_body_matches_by_the_end_of_its_name_and_its_line():
    loop = "jit(f)/transpose(jvp())/while/body/closed_call/checkpoint/jit(inner)/dot_general"
    compiled = [_at("all-reduce", loop, 7), _at("all-reduce", "jit(f)/while/body/dot_general", 9)]
    predicted = [_ref("all-reduce", "dot_general", 9, 2), _ref("all-reduce", "dot_general", 7, 1)]
    out, left = match(compiled, predicted)
    assert [c.predicted for c in out] == [(predicted[1],), (predicted[0],)]
    assert left == []


def test_a_weak_match_never_takes_what_a_strong_one_needs():
    # the first compiled collective could take the second prediction (same op name and
    # line) before the first (only the end of its name); the second compiled one names
    # the second prediction whole: it gets it, the first the other
    compiled = [
        _at("all-reduce", "jit(f)/w/body/dot_general", 5),
        _at("all-reduce", "jit(f)/z/dot_general", 5),
    ]
    predicted = [
        _ref("all-reduce", "dot_general", 3, 1),
        _ref("all-reduce", "jit(f)/z/dot_general", 5, 2),
    ]
    out, left = match(compiled, predicted)
    assert [c.predicted for c in out] == [(predicted[0],), (predicted[1],)]
    assert left == []


def test_a_copy_of_a_matched_collective_is_predicted_by_the_same_op():
    # a rematerialized op compiled twice, predicted once
    compiled = [_at("all-reduce", "jit(f)/checkpoint/dot_general", 4)] * 2
    predicted = [_ref("all-reduce", "dot_general", 4)]
    out, left = match(compiled, predicted)
    assert [c.predicted for c in out] == [(predicted[0],), (predicted[0],)]
    assert left == []


def test_another_kind_or_another_op_is_no_match():
    compiled = [_at("all-gather", "jit(f)/body/dot_general", 4), _at("all-reduce", "jit(f)/add", 8)]
    predicted = [_ref("all-reduce", "dot_general", 4), _ref("all-reduce", "reduce_sum", 9)]
    out, left = match(compiled, predicted)
    assert [c.predicted for c in out] == [(), ()]
    assert left == predicted
