"""Provenance: chains of steps back to an axis' annotation, and why a dim is replicated."""

from types import SimpleNamespace

from shardscope.backend.propagation.annotate import Annotation
from shardscope.backend.propagation.conflicts import Conflict, Proposal
from shardscope.backend.propagation.provenance import Provenance
from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.sharding.spec import Spec
from shardscope.backend.sharding.values import ValueSharding
from tests.support.compile_oracle import propagated


def _vs(*dims):
    return ValueSharding(tuple(tuple(d) for d in dims), tuple(True for _ in dims))


def _timeline():
    steps = [
        Step(0, 10, "stablehlo.sine", "a", "operand-0", ("result-0",), (1,), 0),
        Step(1, 11, "stablehlo.cosine", "a", "operand-0", ("result-0",), (2,), 1),
        Step(2, None, "func.return", "b", "operand-0", ("result-0",), (2,), None, False),
    ]
    initial = {0: _vs(["a"], [])}
    final = {0: _vs(["a"], []), 1: _vs(["a"], []), 2: _vs(["a"], ["b"]), 3: _vs([], [])}
    origins = {1: {"a": "input: 0 (x, user)"}, 2: {"a": "input: 0 (x, user)"}}
    return Timeline(steps, initial, final, origins, mesh={"a": 2, "b": 2})


ANN = Annotation("x", Spec.of("a", None), "user", 0, "input: 0")


def test_chain_walks_back_to_the_annotation():
    pv = Provenance(_timeline(), annotations=[ANN])
    chain = pv.chain(2, "a")
    assert [(link.kind, link.value, link.step) for link in chain.links] == [
        ("step", 2, 1),
        ("step", 1, 0),
        ("annotation", 0, None),
    ]
    assert chain.links[0].op_name == "stablehlo.cosine" and chain.links[0].source_value == 1
    assert chain.origin == "input: 0 (x, user)" and chain.source == "user"
    # the annotated value's own chain is the annotation alone
    assert [link.kind for link in pv.chain(0, "a").links] == ["annotation"]


def test_an_unrecorded_step_ends_the_chain():
    pv = Provenance(_timeline(), annotations=[ANN])
    dim = pv.dim(2, 1)
    assert dim.axes == ("b",)
    (chain,) = dim.chains
    assert [link.kind for link in chain.links] == ["unrecorded"]
    assert chain.source == "unknown" and chain.origin == ""


def test_origin_sources_user_code_and_program():
    code = Annotation("w", Spec.of("a"), "code", 5, "constraint_1")
    pv = Provenance(_timeline(), annotations=[ANN, code])
    assert pv._source_of("input: 0 (x, user)") == "user"
    assert pv._source_of("constraint_1") == "code"
    assert pv._source_of("output: 2") == "program"
    assert pv._source_of("") == "unknown"


def test_why_replicated_spec_scalar_and_no_annotation():
    graph = SimpleNamespace(
        values=[SimpleNamespace(rank=2), SimpleNamespace(rank=2), SimpleNamespace(rank=2)]
        + [SimpleNamespace(rank=0)]
    )
    pv = Provenance(_timeline(), annotations=[ANN], graph=graph)
    assert "your spec on x keeps dimension 1 replicated" in pv.dim(0, 1).replicated_because
    assert "went to other dimensions" in pv.dim(1, 1).replicated_because
    assert pv.why_replicated(3, 0)[0] == "a scalar has no dimension to shard"
    final_less = Provenance(Timeline([], {}, {}), graph=None)
    assert "no sharded tensor flows into it" in final_less.why_replicated(7, 0)[0]


def test_why_replicated_names_the_conflict_by_the_graph_result():
    conflict = Conflict(
        op=4,
        op_name="stablehlo.add",
        factor="i",
        factor_size=8,
        dims={"operand-0": [0], "operand-1": [0], "result-0": [0]},
        proposals=[Proposal("operand-0", 1, ("a",), "x"), Proposal("operand-1", 2, ("b",), "y")],
        kept=(),
        rule="longest common prefix",
    )
    graph = SimpleNamespace(
        ops={4: SimpleNamespace(results=[3], operands=[1, 2])},
        values=[SimpleNamespace(rank=2)] * 4,
    )
    tl = Timeline([], {}, {3: _vs([], [])})
    pv = Provenance(tl, conflicts=[conflict], graph=graph)
    why, hits = pv.why_replicated(3, 0)
    assert hits == (0,)
    assert "conflict at stablehlo.add (op 4) on factor i" in why
    assert "operand-0 offered a (x)" in why and "kept nothing by longest common prefix" in why
    assert pv.why_replicated(3, 1)[1] == ()


def test_real_propagation_mlp_chain_of_a_propagated_axis():
    result = propagated("example:mlp")
    graph = result.graph
    pv = Provenance(
        result.timeline, annotations=result.annotations, conflicts=result.conflicts, graph=graph
    )
    b1 = graph.value_by_name("params['b1']").id
    (chain,) = pv.dim(b1, 0).chains
    assert chain.axis == "model" and chain.source == "user"
    assert chain.links[-1].kind == "annotation"
    assert graph.values[chain.links[-1].value].name == "params['w1']"
    # each link's source is the next link's value, and steps go back in time
    for newer, older in zip(chain.links, chain.links[1:], strict=False):
        assert newer.source_value == older.value
        assert older.step is None or older.step < newer.step


def test_real_propagation_conflict_explains_the_replicated_add():
    result = propagated("example:conflict")
    graph = result.graph
    pv = Provenance(
        result.timeline, annotations=result.annotations, conflicts=result.conflicts, graph=graph
    )
    out = graph.functions[graph.main].results[0]
    dim = pv.dim(out, 0)
    assert dim.axes == () and dim.conflicts == (0,)
    assert "stablehlo.add" in dim.replicated_because
    assert dim.to_json()["replicated_because"] == dim.replicated_because
