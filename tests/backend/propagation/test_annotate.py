"""Annotation policy: validating specs, code annotations, and naming origins back."""

import pytest

from shardscope.backend.errors import SpecError
from shardscope.backend.propagation import annotate as ann
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import Spec, parse_spec


def test_check_annotation_errors_name_the_fix():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    with pytest.raises(SpecError, match="rank 2"):
        ann.check_annotation("x", parse_spec("data"), (8, 4), mesh)
    assert len(ann.check_annotation("x", parse_spec("data"), (8, 4), mesh, strict=False).dims) == 2
    with pytest.raises(SpecError, match="use one of data, model"):
        ann.check_annotation("x", parse_spec("rows,_"), (8, 4), mesh)
    assert ann.as_spec(["data", None]).format() == "data,_"


def test_annotation_json_gives_the_spec_as_text():
    a = ann.Annotation("x", parse_spec("data,_"), "user", 3, "input: 0")
    assert a.to_json() == {
        "target": "x",
        "spec": "data,_",
        "source": "user",
        "value": 3,
        "origin": "input: 0",
    }
    assert list(a.to_json()) == ["target", "spec", "source", "value", "origin"]


@pytest.fixture(scope="module")
def shmap_graph():
    from shardscope.backend.program.load import load_program
    from tests.support.inputs import CORPUS

    return load_program(str(CORPUS / "shmap.py")).graph


def test_constraints_take_the_names_shardy_recorded(shmap_graph):
    annotations = [
        ann.Annotation("x", Spec(), "user", 0, "input: 0"),
        ann.Annotation("h", Spec(), "user", 5, ""),
        ann.Annotation("c", Spec(), "code", 7, "op:4"),
        ann.Annotation("d", Spec(), "code", 8, "op:6"),
    ]
    ann.name_constraints(annotations, {5: "constraint_0", 7: "constraint_1"}, shmap_graph)
    assert [a.origin for a in annotations] == ["input: 0", "constraint_0", "constraint_1", "op:6"]


def test_shard_map_specs_are_code_annotations_named_as_shardy_names_them(shmap_graph):
    graph = shmap_graph
    (mc,) = [op for op in graph.ops if op.name == "sdy.manual_computation"]
    annotations = [a for a in ann.code_annotations(graph) if a.origin.startswith(f"op:{mc.id}/")]
    x, w = mc.operands
    assert [(a.value, a.spec.format(), a.origin) for a in annotations] == [
        (x, "data?,?", f"op:{mc.id}/input: 0"),
        (w, "?,?", f"op:{mc.id}/input: 1"),
        (mc.results[0], "data?,?", f"op:{mc.id}/output: 0"),
    ]
    assert annotations[0].target.endswith("in_specs[0] (x)")
    ann.name_constraints(annotations, {mc.results[0]: "mc_0"}, graph)
    assert [a.origin for a in annotations] == ["mc_0_input: 0", "mc_0_input: 1", "mc_0_output: 0"]
    # Without a recorded name (origins off) the placeholder stays.
    again = [a for a in ann.code_annotations(graph) if "/" in a.origin]
    ann.name_constraints(again, {}, graph)
    assert [a.origin for a in again] == [
        f"op:{mc.id}/input: 0",
        f"op:{mc.id}/input: 1",
        f"op:{mc.id}/output: 0",
    ]


def test_origins_are_described_by_their_annotation():
    annotations = [
        ann.Annotation("x", Spec(), "user", 0, "input: 0"),
        ann.Annotation("h", Spec(), "user", 5, "constraint_0"),
        ann.Annotation("h2", Spec(), "code", 5, "constraint_9"),
    ]
    describe = ann.origin_describer(annotations)
    assert describe("input: 0", 2) == "input: 0 (x, user)"
    # ``self`` is the value's own (first) annotation.
    assert describe("self", 5) == "constraint_0 (h, user)"
    assert describe("self", 6) == "self"
    assert describe("output: 1", 2) == "output: 1"


def test_an_edited_gspmd_program_keeps_its_constraint_in_shardys_form_only():
    from shardscope.backend.program.load import load_program
    from shardscope.backend.propagation.propagate import prepare

    program = load_program("tests/inputs/mlir/gspmd_constraint.mlir")
    mesh = {"data": 4, "model": 2}
    # as written: the program's own call stays, beside its constraint in Shardy's form
    kept = prepare(program, mesh, keep_annotated=True).annotated_text
    assert "custom_call @Sharding" in kept and "sdy.sharding_constraint" in kept
    # with the user's specs, the constraint stands alone: XLA compiles a module that
    # still holds a GSPMD call with GSPMD, whatever the user's specs
    edited = prepare(program, mesh, {"x": "data,_"}, keep_annotated=True).annotated_text
    assert "custom_call @Sharding" not in edited
    assert edited.count("sdy.sharding_constraint") == 1
