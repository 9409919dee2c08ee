"""Errors a user can act on: one family, so the CLI and the window catch them all alike."""

import inspect

import pytest

from shardscope.backend import errors
from shardscope.backend.errors import MeshError, ProgramError, ShardscopeError, SpecError
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec


def test_every_error_here_is_a_shardscope_error():
    classes = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__
    ]
    assert {c.__name__ for c in classes} == {
        "ShardscopeError",
        "ProgramError",
        "MeshError",
        "SpecError",
    }
    for cls in classes:
        assert issubclass(cls, ShardscopeError) and issubclass(cls, Exception)


def test_the_kinds_are_distinct():
    kinds = (ProgramError, MeshError, SpecError)
    for kind in kinds:
        others = [k for k in kinds if k is not kind]
        assert not any(issubclass(kind, other) for other in others)


@pytest.mark.parametrize("kind", [ProgramError, MeshError, SpecError])
def test_the_message_is_the_text_given(kind):
    with pytest.raises(ShardscopeError) as info:
        raise kind("x.py: defines no PROGRAM; add `PROGRAM = f`")
    assert str(info.value) == "x.py: defines no PROGRAM; add `PROGRAM = f`"
    assert isinstance(info.value, kind)


def test_bad_input_raises_one_of_them_with_a_one_line_fix():
    with pytest.raises(MeshError) as mesh:
        parse_mesh("data=0")
    with pytest.raises(SpecError) as spec:
        parse_spec("da ta,_")
    for info in (mesh, spec):
        assert isinstance(info.value, ShardscopeError) and "\n" not in str(info.value)
    assert str(mesh.value) == "mesh axis 'data' has size 0: give a size >= 1"


def test_a_long_value_is_quoted_shortened_with_its_length():
    assert errors.shortened("abc") == "'abc'"
    long = "x" * 10_000
    shown = errors.shortened(long)
    assert len(shown) < 70 and "(10000 characters)" in shown and shown.startswith("'xxx")
    assert errors.shortened("a" * 60) == repr("a" * 60)


def test_a_long_path_keeps_its_end():
    path = "/" + "d/" * 500 + "name.json"
    shown = errors.shortened(path, 60, keep="tail", quote=False)
    assert shown.endswith("/d/name.json") and len(shown) < 70
    assert f"({len(path)} characters)" in shown


def test_a_message_quoting_a_long_input_whole_is_cut_to_its_ends():
    message = f"error: unrecognized arguments: --x {'y' * 10_000}z (see --help)"
    shown = errors.shortened_words(message)
    assert len(shown) < 200 and "(10001 characters)" in shown
    assert shown.startswith("error: unrecognized arguments: --x yyy") and shown.endswith(
        "yz (see --help)"
    )
    assert errors.shortened_words("a short line") == "a short line"
