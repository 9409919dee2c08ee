"""Partition specs: CLI syntax, validation messages, JAX and JSON forms."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import PartitionSpec as P

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import (
    DimSpec,
    Spec,
    axes_text,
    dims_text,
    format_spec,
    parse_spec,
    spec_words,
    validate_spec,
)

MESH = parse_mesh("data=4,model=2,x=1")


def test_parse_cli_syntax():
    spec = parse_spec("data+model, _ ,None,?,x?@p2,model@p0")
    assert spec.dims == (
        DimSpec(("data", "model")),
        DimSpec(),
        DimSpec(),
        DimSpec((), True),
        DimSpec(("x",), True, 2),
        DimSpec(("model",), False, 0),
    )
    assert spec.format() == "data+model,_,_,?,x?@p2,model@p0"
    assert parse_spec("data@p1?") == parse_spec("data?@p1")
    assert parse_spec("") == Spec()


dims = st.builds(
    DimSpec,
    st.lists(st.sampled_from(["a", "b", "c_1"]), unique=True, max_size=3).map(tuple),
    st.booleans(),
    st.none() | st.integers(0, 9),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(dims, max_size=5))
def test_format_parse_round_trip(entries):
    spec = Spec(tuple(entries))
    assert parse_spec(format_spec(spec)) == spec


@settings(max_examples=100, deadline=None)
@given(st.lists(st.none() | st.sampled_from(["a", "b"]) | st.just(["a", "b"]), max_size=4))
def test_json_round_trip(entries):
    spec = Spec.from_json(entries)
    assert Spec.from_json(spec.to_json()) == spec
    assert spec.to_json() == entries


def test_jax_round_trip():
    spec = parse_spec("data+model,_,?")
    assert spec.to_jax() == P(("data", "model"), None, P.UNCONSTRAINED)
    assert Spec.from_jax(spec.to_jax()) == spec
    assert Spec.from_jax(P("data")) == Spec.of("data")


def test_padding_and_warnings():
    assert parse_spec("data").padded(3) == Spec.of("data", None, None)
    assert validate_spec(parse_spec("data,model"), MESH, (8, 4)) == []
    warnings = validate_spec(parse_spec("data,model"), MESH, (6, 4))
    assert len(warnings) == 1
    assert "dim 0 (size 6) is split 4 ways" in warnings[0]
    assert "use a size divisible by 4" in warnings[0]


@pytest.mark.parametrize(
    ("spec", "shape", "strict", "fix"),
    [
        ("data,y", None, False, "uses unknown axis 'y': use one of data, model, x"),
        ("data,data", None, False, "use each mesh axis at most once"),
        ("data+model,model", None, False, "use each mesh axis at most once"),
        ("data", (8, 8), True, "give exactly one entry per dim (strict mode)"),
        ("data,_,_", (8, 8), False, "drop 1 trailing entries"),
        ("data,,model", None, False, "write _ for a replicated dim"),
        ("data+", None, False, "join axis names with +"),
        ("da ta", None, False, "join axis names with +"),
        ("data??", None, False, "then optional ? and @pN"),
        ("data@q1", None, False, "then optional ? and @pN"),
    ],
)
def test_validation_messages_name_the_fix(spec, shape, strict, fix):
    with pytest.raises(SpecError) as info:
        validate_spec(parse_spec(spec), MESH, shape, strict=strict)
    assert fix in str(info.value) and "\n" not in str(info.value)


def test_replicated_axes_are_checked():
    with pytest.raises(SpecError, match="use one of data, model, x"):
        validate_spec(Spec.of("data").__class__(Spec.of("data").dims, ("nope",)), MESH)
    with pytest.raises(SpecError, match="remove it from one"):
        validate_spec(Spec(Spec.of("data").dims, ("data",)), MESH)


def test_entry_errors():
    with pytest.raises(SpecError, match="use None, a name or a list of names"):
        Spec.of(["a", 3])
    with pytest.raises(SpecError, match="fix that entry"):
        Spec.of(3)
    with pytest.raises(SpecError, match="give one entry per dim"):
        Spec.from_json("data")
    with pytest.raises(SpecError, match="drop the '\\?' or the axes"):
        parse_spec("data?").to_jax()


def test_dims_text_writes_axes_per_dimension_as_badges_show_them():
    from shardscope.backend.sharding.spec import dims_text

    assert dims_text([["data", "model"], []]) == "[data+model, _]"
    assert dims_text(None) == "?" and dims_text(None, "[?]") == "[?]"


def test_a_badge_shows_the_axes_of_a_spec_without_its_marks():
    assert dims_text(None) == "?" and dims_text(None, "[?]") == "[?]"
    assert dims_text(Spec()) == "[]"
    assert dims_text(parse_spec("data+model?@p1,_")) == "[data+model, _]"
    assert dims_text([("data", "model"), ()]) == "[data+model, _]"
    assert axes_text(("data", "model")) == "data+model" and axes_text(()) == "_"


def test_history_shows_a_users_spec_with_its_marks():
    assert spec_words(None) == "no spec"
    assert spec_words(parse_spec("data+model?@p1,_")) == "[data+model?@p1, _]"
