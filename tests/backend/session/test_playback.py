"""Playback: moving among a timeline's steps, playing by ticks, filters, groups, events."""

from types import SimpleNamespace

import pytest

from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.session.playback import Playback, StepFilter
from shardscope.backend.sharding.values import ValueSharding


def _vs(*dims):
    return ValueSharding(tuple(tuple(d) for d in dims), tuple(True for _ in dims))


def _timeline():
    # value 0 is annotated (a on dim 0); a flows 0 -> 1 -> 2; b reaches 3 at step 2 from
    # 4; step 3 moves both a and b onto 5 (two rows, one index).
    steps = [
        Step(0, 10, "stablehlo.sine", "a", "operand-0", ("result-0",), (1,), 0),
        Step(1, 11, "stablehlo.cosine", "a", "operand-0", ("result-0",), (2,), 1),
        Step(2, 12, "stablehlo.exp", "b", "operand-0", ("result-0",), (3,), 4),
        Step(3, 13, "stablehlo.add", "a", "operand-0", ("result-0",), (5,), 2),
        Step(3, 13, "stablehlo.add", "b", "operand-1", ("result-0",), (5,), 3),
    ]
    initial = {0: _vs(["a"], []), 4: _vs(["b"])}
    final = {
        0: _vs(["a"], []),
        1: _vs(["a"], []),
        2: _vs(["a"], []),
        3: _vs(["b"]),
        4: _vs(["b"]),
        5: _vs(["a"], ["b"]),
    }
    return Timeline(steps, initial, final, mesh={"a": 2, "b": 2})


def _graph():
    scopes = {10: "layer0/mlp", 11: "layer0/attn", 12: "layer1", 13: "layer1/out"}
    ops = [SimpleNamespace(scope=scopes.get(i, "")) for i in range(14)]
    return SimpleNamespace(ops=ops)


def _record(pb):
    events = []
    pb.listen(events.append)
    return events


def test_starts_off_showing_the_final_state():
    pb = Playback(_timeline())
    assert not pb.active and pb.position is None and len(pb) == 4
    assert pb.state()[5].dims == (("a",), ("b",))
    assert pb.value_at(2).dims == (("a",), ())


def test_advance_back_seek_home_end_and_the_state_at_each():
    pb = Playback(_timeline())
    events = _record(pb)
    assert pb.advance()
    assert pb.step_index == 0 and pb.value_at(1).dims == (("a",), ())
    assert pb.value_at(2).dims == ((), ())
    # from the final state to step 0: what steps 1..3 added goes away
    assert events[-1].kind == "position" and events[-1].changed == frozenset({2, 3, 5})
    pb.advance()
    assert events[-1].changed == frozenset({2})
    assert pb.value_at(2).dims == (("a",), ())
    assert pb.back() and pb.step_index == 0
    assert not pb.back()  # clamped at the first step
    assert pb.position == 0
    pb.end()
    assert pb.step_index == 3 and pb.at_end
    assert pb.state()[5].dims == (("a",), ("b",))
    assert not pb.advance()  # clamped at the last
    pb.home()
    assert pb.step_index == 0
    # a jump reports every value that changed between the two steps
    pb.seek(3)
    assert events[-1].changed == frozenset({2, 3, 5})
    assert pb.seek_step(2) and pb.step_index == 2
    assert pb.value_at(5).dims == ((), ())
    pb.reset()
    assert not pb.active and pb.value_at(5).dims == (("a",), ("b",))


def test_one_index_with_several_rows_is_one_position():
    pb = Playback(_timeline())
    pb.seek_step(3)
    assert {s.axis for s in pb.steps()} == {"a", "b"}
    assert pb.changed_between(2, 3) == {5}
    assert pb.changed_between(None, -1) == {1, 2, 3, 5}


def test_back_from_off_goes_to_the_last_step():
    pb = Playback(_timeline())
    pb.back()
    assert pb.step_index == 3


def test_play_ticks_at_speed_and_stops_at_the_end():
    pb = Playback(_timeline())
    events = _record(pb)
    pb.set_speed(2.0)
    pb.play()
    assert pb.playing and pb.step_index == 0
    assert pb.tick(0.25) == 0  # half a step: nothing yet, the remainder is kept
    assert pb.tick(0.25) == 1 and pb.step_index == 1
    assert pb.tick(0.0) == 0
    assert pb.tick(10.0) == 2  # clamped at the last
    assert pb.at_end and not pb.playing
    assert events[-1].kind == "finished"
    assert pb.state() == pb.timeline.state_at(pb.timeline.last_index)
    # playing again from the end starts over
    pb.play()
    assert pb.step_index == 0 and pb.playing
    pb.toggle()
    assert not pb.playing
    assert pb.tick(5.0) == 0


def test_end_while_playing_stops_at_the_last_step_at_once():
    pb = Playback(_timeline())
    pb.play()
    events = _record(pb)
    assert pb.end() and pb.at_end and not pb.playing
    assert [e.kind for e in events] == ["position", "finished"]
    assert pb.tick(1.0) == 0 and pb.at_end


def test_speed_must_be_positive():
    pb = Playback(_timeline())
    with pytest.raises(ValueError, match="steps per second"):
        pb.set_speed(0)
    with pytest.raises(ValueError):
        pb.set_speed(float("nan"))


def test_filter_by_axis_value_and_scope():
    pb = Playback(_timeline(), _graph())
    assert pb.set_filter(StepFilter(axis="b")) == 2
    assert pb.indices == [2, 3]
    pb.home()
    pb.advance()
    assert pb.step_index == 3
    assert pb.set_filter(StepFilter(value=2)) == 2  # targets 2 at step 1, from 2 at step 3
    assert pb.indices == [1, 3] and pb.step_index == 3
    assert pb.set_filter(StepFilter(scope="layer0")) == 2
    assert pb.indices == [0, 1]
    assert pb.step_index == 1  # step 3 is gone: the nearest position that remains
    assert pb.set_filter(StepFilter(scope="layer1/out", axis="a")) == 1
    assert pb.set_filter(StepFilter(axis="nope")) == 0
    assert pb.position is None and not pb.advance()
    pb.play()
    assert not pb.playing
    assert pb.set_filter(StepFilter()) == 4
    assert StepFilter(axis="a", scope="x").describe() == "axis a, scope x"


def test_sub_axes_match_their_axis_filter():
    steps = [Step(0, None, "x", "a:(1)2", "operand-0", ("result-0",), (1,))]
    pb = Playback(Timeline(steps, {}, {1: _vs(["a:(1)2"])}, mesh={"a": 4}))
    assert pb.set_filter(StepFilter(axis="a")) == 1


def test_groups_by_op_scope_and_by_axis():
    pb = Playback(_timeline(), _graph())
    by_op = pb.groups("op")
    assert [(g.key, g.start, g.end) for g in by_op] == [("layer0", 0, 1), ("layer1", 2, 3)]
    by_axis = pb.groups("axis")
    assert [(g.key, len(g)) for g in by_axis] == [("a", 2), ("b", 1), ("a+b", 1)]
    assert Playback(_timeline()).groups("op")[0].key == "stablehlo.sine"
    with pytest.raises(ValueError):
        pb.groups("colour")


def test_an_empty_timeline_never_moves():
    pb = Playback(Timeline([], {}, {}))
    assert not pb.advance() and not pb.end() and pb.groups() == []
    pb.play()
    assert not pb.playing and pb.state() == {}


def test_start_at_a_step_and_unlisten():
    pb = Playback(_timeline(), start=2)
    assert pb.step_index == 2
    events = []
    pb.listen(events.append)
    pb.unlisten(events.append)
    pb.advance()
    assert events == []
