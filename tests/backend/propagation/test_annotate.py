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


def test_constraints_take_the_names_shardy_recorded():
    annotations = [
        ann.Annotation("x", Spec(), "user", 0, "input: 0"),
        ann.Annotation("h", Spec(), "user", 5, ""),
        ann.Annotation("c", Spec(), "code", 7, "op:4"),
        ann.Annotation("d", Spec(), "code", 8, "op:6"),
    ]
    ann.name_constraints(annotations, {5: "constraint_0", 7: "constraint_1"})
    assert [a.origin for a in annotations] == ["input: 0", "constraint_0", "constraint_1", "op:6"]


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
