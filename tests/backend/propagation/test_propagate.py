"""Propagation against the compiler: a real compile, the registered pipeline, the steps."""

import pytest

from shardscope.backend.errors import SpecError
from shardscope.backend.program.mlir import run_passes
from shardscope.backend.propagation.propagate import final_state, prepare, propagate
from tests.support.compile_oracle import compiled_io_shardings, loaded, propagated
from tests.support.inputs import MLIR

EXAMPLES = [
    f"example:{n}" for n in ("mlp", "attention", "transformer", "scan", "conflict", "matmul6")
]
CORPUS = [
    f"tests/inputs/corpus/{n}.py"
    for n in ("loop_reshape", "gather_conv", "pytree_grad", "cond_call", "shmap", "two_calls")
]
PROGRAMS = EXAMPLES + CORPUS


@pytest.mark.slow
@pytest.mark.parametrize("source", PROGRAMS)
def test_arguments_and_results_equal_a_real_compile(source):
    program = loaded(source)
    result = propagated(source)
    ins, outs = compiled_io_shardings(program)
    graph = result.graph
    ours_in = [v.hlo_sharding for v in result.values if v.role == "arg"]
    ours_out = [result.values[v].hlo_sharding for v in graph.functions[graph.main].results]
    assert ours_in == ins
    assert ours_out == outs


@pytest.mark.parametrize("source", PROGRAMS)
def test_timeline_replays_to_the_final_state(source):
    tl = propagated(source).timeline
    assert tl.unexplained() == {}
    end = tl.state_at(tl.last_index)
    assert {v: s.dims for v, s in end.items()} == {v: s.dims for v, s in tl.final.items()}
    start = tl.state_at(-1)
    for v, s in start.items():
        assert s.dims == (tl.initial[v].dims if v in tl.initial else tuple(() for _ in s.dims))
    indices = [s.index for s in tl.steps]
    assert indices == sorted(indices)


@pytest.mark.parametrize(
    "source",
    [
        "example:scan",
        "tests/inputs/corpus/cond_call.py",
        "tests/inputs/corpus/shmap.py",
        "example:mlp",
    ],
)
def test_intermediates_equal_the_registered_pipeline(source):
    result = propagated(source)
    prep = prepare(loaded(source))
    run_passes(prep.module, "builtin.module(sdy-propagation-pipeline)")
    theirs = final_state(prep)
    ours = {v.id: tuple(tuple(d) for d in v.spec) for v in result.values}
    for vid, sharding in theirs.items():
        assert ours[vid] == sharding.dims, result.graph.values[vid].display_name


def test_scan_steps_reach_inside_the_loop_body():
    result = propagated("example:scan")
    graph = result.graph
    # The scan body is a while region whose ops call a function: either counts as inside.
    inside = [
        s
        for s in result.timeline.steps
        if s.op is not None
        and (graph.ops[s.op].parent is not None or graph.ops[s.op].function != graph.main)
    ]
    assert inside, "no step inside the while body"
    assert any(s.op_name == "stablehlo.while" for s in result.timeline.steps)


def test_origins_name_the_user_annotation():
    result = propagated("example:mlp")
    hidden = [v for v in result.values if v.role == "result"][0]
    origins = result.timeline.origins[hidden.id]
    assert origins["data"].startswith("input: ") and "(x, user)" in origins["data"]


def test_code_annotation_is_kept_and_reported():
    result = propagated("tests/inputs/corpus/cond_call.py")
    code = [a for a in result.annotations if a.source == "code"]
    assert code and code[0].origin.startswith("constraint_")
    out = result.value("result[0]")
    assert out.spec == [[], ["model"]]


def test_constraint_on_an_intermediate_open_dims_and_priorities():
    program = loaded("example:mlp")
    graph = program.graph
    dot = next(op for op in graph.ops if op.name == "stablehlo.dot_general")
    hidden = graph.values[dot.results[0]]
    specs = {"x": "data?,_", hidden.id: "_,model"}
    result = propagate(program, None, specs, conflicts=False, collectives=False)
    assert result.value(hidden.id).spec == [[], ["model"]]
    x = result.timeline.initial[result.value("x").id]
    assert x.closed == (False, True)
    prio = propagate(
        program, None, {"x": "data@p1,_", "params['w1']": "_,model"}, collectives=False
    )
    assert prio.value("x").spec == [["data"], []]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        ({"nope": "data,_"}, "valid names: "),
        ({"x": "rows,_"}, "unknown axis 'rows'"),
        ({"x": "data"}, "rank 2"),
    ],
)
def test_bad_specs_are_clear_errors(specs, message):
    with pytest.raises(SpecError, match=message):
        propagate(loaded("example:conflict"), None, specs)


@pytest.mark.parametrize("kind", ["", "_constraint"])
def test_gspmd_annotated_modules_propagate_like_their_shardy_twins(kind):
    # The same function lowered once with Shardy and once with GSPMD (tests/data/make_mlir.py):
    # mhlo.sharding on arguments and custom_call @Sharding must act as sdy annotations do.
    data = MLIR
    mesh = {"data": 4, "model": 2}
    shardy = propagate(loaded(str(data / f"sdy{kind}.mlir")), mesh)
    gspmd = propagate(loaded(str(data / f"gspmd{kind}.mlir")), mesh)
    assert [(v.name, v.spec) for v in gspmd.values if v.role != "intermediate"] == [
        (v.name, v.spec) for v in shardy.values if v.role != "intermediate"
    ]
    code = {a.target: a.spec.format() for a in gspmd.annotations if a.source == "code"}
    assert code["x"] == "data,_" and code["w"] == "_,model"
    if kind:
        graph = gspmd.graph
        call = next(op for op in graph.ops if op.name == "stablehlo.custom_call")
        assert gspmd.values[call.results[0]].spec == [["model"], []]
        assert any(a.spec.format() == "model,_" for a in gspmd.annotations if a.source == "code")


def test_each_call_site_keeps_its_own_shardings():
    result = propagated("tests/inputs/corpus/two_calls.py")
    graph = result.graph
    spec = {v.id: v.spec for v in result.values}
    calls = [op for op in graph.ops if op.function == graph.main and op.name == "func.call"]
    scale_call, twice_call = calls
    # scale(a) with a on data, twice(b) with b on model: each call's result its own.
    assert spec[scale_call.results[0]] == [["data"], []]
    assert spec[twice_call.results[0]] == [[], ["model"]]
    # A callee's body reads one call site throughout, arguments and ops alike, and a
    # nested callee's argument reads through the outer call.
    for name in ("scale", "scale_0", "scale_1"):
        fn = graph.functions[name]
        arg = spec[fn.arguments[0]]
        tanh = next(op for op in graph.ops if op.function == name and op.short_name == "tanh")
        assert spec[tanh.results[0]] == arg, name
    assert spec[graph.functions["scale_0"].arguments[0]] == [[], ["model"]]
