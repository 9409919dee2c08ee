"""The navigation model, without Qt: frames, unfolded scopes, events on real changes, and
the saved view state it reads and writes."""

import json

import pytest

from shardscope.backend.program.layout import Frame
from shardscope.backend.session.navigation import Navigation

# the view state a session file saved by the graph view holds
SAVED = {
    "frames": ["main", "main/op4.r1"],
    "expanded": {"main": ["layer1", "layer1/attn"], "main/op4.r1": []},
}


def counted(nav: Navigation) -> list[int]:
    calls: list[int] = []
    nav.events.changed.connect(lambda: calls.append(len(calls)))
    return calls


def test_saved_view_state_reads_and_writes_back_unchanged():
    nav = Navigation.from_json(json.loads(json.dumps(SAVED)))
    assert nav.frames == (Frame("main"), Frame("main", 4, 1))
    assert nav.unfolded() == frozenset()
    assert nav.unfolded("main") == {"layer1", "layer1/attn"}
    assert nav.to_json() == SAVED
    assert list(nav.to_json()) == ["frames", "expanded"]


def test_an_empty_or_partial_state_is_no_place_yet():
    nav = Navigation.from_json({})
    assert nav.frames == () and nav.frame is None and nav.unfolded() is None
    assert nav.to_json() == {"frames": [], "expanded": {}}
    only = Navigation.from_json({"expanded": {"main": ["a"]}, "zoom": 2.0})
    assert only.unfolded("main") == {"a"} and only.frames == ()


@pytest.mark.parametrize("state", [{"frames": ["main/opX"]}, {"expanded": ["main"]}])
def test_a_state_in_an_unknown_form_is_refused(state):
    with pytest.raises(ValueError):
        Navigation.from_json(state)


def test_enter_and_back_never_leave_the_outermost_frame():
    nav = Navigation([Frame("main")])
    calls = counted(nav)
    nav.enter(Frame("main", 3, 0))
    nav.enter(Frame("body"))
    assert nav.frame == Frame("body")
    assert nav.back(5)
    assert nav.frames == (Frame("main"),)
    assert not nav.back()
    assert len(calls) == 3


def test_unfolding_fires_only_on_a_real_change():
    nav = Navigation([Frame("main")])
    calls = counted(nav)
    assert nav.set_unfolded({"a", "a/b"})
    assert not nav.set_unfolded(["a/b", "a"])
    assert nav.set_unfolded([], frame_key="other")
    assert nav.unfolded("other") == frozenset()
    assert nav.state_key() == (("main",), frozenset({"a", "a/b"}))
    assert len(calls) == 2


def test_a_default_is_remembered_without_an_event_and_never_overrides():
    nav = Navigation([Frame("main")])
    calls = counted(nav)
    assert nav.state_key(frozenset({"x"})) == (("main",), frozenset({"x"}))
    assert nav.remember_default("main", {"x"}) == {"x"}
    assert nav.remember_default("main", {"y"}) == {"x"}
    assert nav.to_json()["expanded"] == {"main": ["x"]}
    assert calls == []


def test_show_replaces_the_whole_place_once():
    nav = Navigation([Frame("main")], {"main": ["a"]})
    calls = counted(nav)
    frames = [Frame("main"), Frame("main", 2, 0)]
    assert nav.show(frames, {"main": {"a"}, "main/op2.r0": set()})
    assert not nav.show(frames, {"main": ["a"], "main/op2.r0": []})
    assert nav.unfolded() == frozenset()
    assert len(calls) == 1
    # a copy: changing it leaves the model as it is
    copy = nav.unfolded_map()
    copy["main"] = frozenset()
    assert nav.unfolded("main") == {"a"}
