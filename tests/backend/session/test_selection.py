"""The selection model, without Qt: typed setters and events that fire on real changes."""

from shardscope.backend.session.selection import Selection


def recorder(signal) -> list:
    seen: list = []
    signal.connect(seen.append)
    return seen


def test_value_op_and_step_fire_once_per_change():
    selection = Selection()
    values = recorder(selection.events.value)
    ops = recorder(selection.events.op)
    steps = recorder(selection.events.step)
    assert selection.select_value(3)
    assert not selection.select_value(3)
    assert selection.select_op(7)
    assert selection.select_step(2)
    assert not selection.select_step(2)
    assert selection.select_step(-1)  # no step: the final state
    assert selection.step is None
    assert not selection.select_step(None)
    assert selection.select_value(None)
    assert (values, ops, steps) == ([3, None], [7], [2, None])
    assert (selection.value, selection.op) == (None, 7)


def test_device_groups_are_normalised_and_fire_on_change():
    selection = Selection()
    seen = recorder(selection.events.device_groups)
    assert selection.outline_groups([[0, 2], (1, 3)])
    assert selection.device_groups == ((0, 2), (1, 3))
    assert not selection.outline_groups([(0, 2), [1, 3]])
    assert selection.clear_groups()
    assert not selection.clear_groups()
    assert not selection.outline_groups(None)
    assert seen == [((0, 2), (1, 3)), ()]


def test_hovered_devices():
    selection = Selection()
    seen = recorder(selection.events.hovered_devices)
    assert selection.hover_devices([4, 5, 4])
    assert not selection.hover_devices({5, 4})
    assert selection.hover_devices([])
    assert seen == [frozenset({4, 5}), frozenset()]
    assert selection.hovered_devices == frozenset()
