"""Timeline: state at step k by bisect, replay, and completion of unrecorded axes."""

from hypothesis import given, settings
from hypothesis import strategies as st

from shardscope.backend.propagation.timeline import Step, Timeline, complete
from shardscope.backend.sharding.values import ValueSharding, merge_full_axes

MESH = {"a": 2, "b": 2, "c": 2, "d": 2}


def _vs(*dims):
    return ValueSharding(tuple(tuple(d) for d in dims), tuple(True for _ in dims))


def test_state_at_each_step():
    steps = [
        Step(0, 1, "stablehlo.add", "a", "operand-0", ("result-0",), (2,)),
        Step(1, 2, "stablehlo.tanh", "b", "result-0", ("operand-0",), (2, 3)),
    ]
    tl = Timeline(
        steps,
        {1: _vs(["a"], [])},
        {1: _vs(["a"], []), 2: _vs(["a"], ["b"]), 3: _vs([], ["b"])},
        mesh=MESH,
    )
    assert tl.value_at(2, -1).dims == ((), ())
    assert tl.value_at(2, 0).dims == (("a",), ())
    assert tl.value_at(2, 1).dims == (("a",), ("b",))
    assert tl.state_at(0)[3].dims == ((), ())
    assert tl.state_at(5)[3].dims == ((), ("b",))
    assert tl.state_at(-1)[1].dims == (("a",), ())
    assert tl.changes(2) == [(0, "a"), (1, "b")]
    assert tl.unexplained() == {}


def test_sub_axes_merge_back_into_the_full_axis():
    steps = [
        Step(0, 0, "x", "a:(1)2", "operand-0", ("result-0",), (5,)),
        Step(1, 0, "x", "a:(2)2", "operand-0", ("result-0",), (5,)),
    ]
    tl = Timeline(steps, {}, {5: _vs(["a"])}, mesh={"a": 4})
    assert tl.value_at(5, 0).dims == (("a:(1)2",),)
    assert tl.replay()[5] == (("a",),)
    assert merge_full_axes(("a:(1)2", "a:(2)2"), {"a": 4}) == ("a",)


def test_complete_adds_unrecorded_axes_after_the_last_step():
    steps = [Step(0, 0, "x", "a", "operand-0", ("result-0",), (1,))]
    tl = Timeline(steps, {}, {1: _vs(["a"]), 2: _vs(["a", "b"])}, mesh=MESH)
    assert set(tl.unexplained()) == {2}
    done = complete(tl, lambda v: ("func.return", v))
    assert done.unexplained() == {}
    extra = [s for s in done.steps if not s.recorded]
    assert [(s.index, s.axis) for s in extra] == [(1, "a"), (2, "b")]


@st.composite
def growth(draw):
    """Random monotone growth of a few values: Shardy only appends axes to dims."""
    n_values = draw(st.integers(1, 5))
    axes = list(MESH)
    finals, steps, initial = {}, [], {}
    k = 0
    for v in range(n_values):
        rank = draw(st.integers(1, 3))
        order = draw(st.permutations(axes))
        dims = [[] for _ in range(rank)]
        for a in order[: draw(st.integers(0, len(axes)))]:
            dims[draw(st.integers(0, rank - 1))].append(a)
        finals[v] = _vs(*dims)
        n_init = [draw(st.integers(0, len(d))) for d in dims]
        initial[v] = _vs(*[d[:n] for d, n in zip(dims, n_init, strict=True)])
        for d, n in zip(dims, n_init, strict=True):
            for a in d[n:]:
                k += draw(st.integers(0, 2))
                steps.append(Step(k, None, "op", a, "operand-0", ("result-0",), (v,)))
    return initial, finals, steps


@settings(max_examples=60, deadline=None)
@given(growth())
def test_state_at_equals_naive_replay(case):
    initial, finals, steps = case
    tl = Timeline(list(steps), initial, finals, mesh=MESH)
    assert tl.unexplained() == {}
    last = tl.last_index
    for k in range(-1, last + 1):
        state = tl.state_at(k)
        for v, fin in finals.items():
            have = set(initial[v].axes) | {s.axis for s in steps if s.index <= k and v in s.values}
            naive = tuple(tuple(a for a in d if a in have) for d in fin.dims)
            assert state[v].dims == naive
    assert {v: s.dims for v, s in tl.state_at(last).items()} == {
        v: f.dims for v, f in finals.items()
    }


def test_step_json_lists_its_fields_in_order():
    step = Step(4, 2, "stablehlo.add", "a", "operand-0", ("result-0",), (7, 8), 3, False)
    assert step.to_json() == {
        "index": 4,
        "op": 2,
        "op_name": "stablehlo.add",
        "axis": "a",
        "source": "operand-0",
        "targets": ["result-0"],
        "values": [7, 8],
        "source_value": 3,
        "recorded": False,
    }
    assert list(step.to_json())[0] == "index" and list(step.to_json())[-1] == "recorded"
