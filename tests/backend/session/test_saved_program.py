"""A program kept as data in a session: packed, checked and opened without running code."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.program.snippets import read_snippets
from shardscope.backend.session.document import Session
from shardscope.backend.session.persistence import read_state
from shardscope.backend.session.saved_program import check_program, pack_program, unpack_program
from tests.support.inputs import write_input


@pytest.fixture(scope="module")
def mlp():
    program = load_program("example:mlp")
    program.snippets = read_snippets((op.source_file, op.source_line) for op in program.graph.ops)
    return program


def test_a_packed_program_opens_to_the_same_graph_without_running_anything(mlp, monkeypatch):
    import shardscope.backend.program.load as load

    def no_worker(*_args, **_kwargs):
        raise AssertionError("opening a saved program ran a worker")

    monkeypatch.setattr(load, "_load_python", no_worker)
    data = json.loads(json.dumps(pack_program(mlp)))
    assert check_program(data) is None
    program = unpack_program(data, "example:mlp", "s.json")
    assert program.from_session and program.source == "example:mlp"
    assert (program.name, program.kind, program.mesh, program.specs) == (
        mlp.name,
        mlp.kind,
        mlp.mesh,
        mlp.specs,
    )
    assert program.mlir_text == mlp.mlir_text
    assert [v.display_name for v in program.graph.values] == [
        v.display_name for v in mlp.graph.values
    ]
    assert program.snippets == mlp.snippets and program.snippets


def test_a_saved_session_holds_its_program_and_a_new_session_opens_it(mlp, tmp_path):
    s = Session()
    s.set_program(mlp)
    s.save(tmp_path / "s.json")
    state = read_state(tmp_path / "s.json")
    program = unpack_program(state["program"], state["source"], "s.json")
    t = Session()
    t.set_program(program, state=state)
    assert dict(t.specs) == dict(s.specs) and t.mesh == s.mesh


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"mlir": 5}, "mlir is not text"),
        ({"kind": "shell"}, "unknown kind 'shell'"),
        ({"mesh": {"data": 0}}, "positive sizes"),
        ({"mesh": {"data": True}}, "positive sizes"),
        ({"specs": {"x": "data"}}, "lists of axes"),
        ({"params": {"layers": 3}}, "parameters that are not text"),
        ({"sources": {"f.py": {"x": "a"}}}, "source line number 'x'"),
        ({"sources": {"f.py": {"3": 4}}}, "that is not text"),
        ({"path": ["a"]}, "path that is not text"),
    ],
)
def test_a_malformed_program_entry_is_refused_when_the_file_is_read(mlp, tmp_path, change, problem):
    s = Session()
    s.set_program(mlp)
    data = {**s.to_json()}
    data["program"] = {**data["program"], **change}
    path = write_input(tmp_path, "s.json", json.dumps(data))
    with pytest.raises(ShardscopeError, match="open a file saved by File > Save") as info:
        read_state(path)
    assert problem in str(info.value) and "\n" not in str(info.value)


def test_a_version_1_file_cannot_carry_a_program(mlp, tmp_path):
    s = Session()
    s.set_program(mlp)
    data = {**s.to_json(), "version": 1}
    path = write_input(tmp_path, "s.json", json.dumps(data))
    with pytest.raises(ShardscopeError, match="version 1 files do not"):
        read_state(path)


@pytest.mark.parametrize(
    ("mlir", "message"),
    [
        ("module {", "malformed MLIR"),
        ("module { func.func @main( }", "malformed MLIR"),
        ("module {}", "func.func @main"),
        ("[" * 5000, "nest 5000 deep"),
    ],
)
def test_a_saved_module_that_does_not_parse_is_one_line_naming_the_session(mlp, mlir, message):
    data = {**pack_program(mlp), "mlir": mlir}
    with pytest.raises(ShardscopeError, match=message) as info:
        unpack_program(data, "example:mlp", "s.json")
    assert str(info.value).startswith("s.json (its saved program)")
    assert "\n" not in str(info.value)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.sampled_from(["name", "kind", "path", "mlir", "mesh", "specs", "params", "sources"]),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=12),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=8,
    ),
)
def test_fuzzed_program_entries_open_or_fail_in_one_line(mlp, tmp_path, key, value):
    s = Session()
    s.set_program(mlp)
    data = s.to_json()
    data["program"] = {**data["program"], key: value}
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(data))
    try:
        state = read_state(path)
        program = unpack_program(state["program"], state["source"], str(path))
        Session.check_state(program, state)
    except ShardscopeError as exc:
        assert str(exc) and "\n" not in str(exc)
