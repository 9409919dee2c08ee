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


ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


@pytest.fixture(scope="module")
def torch_capture(mlp, tmp_path_factory):
    """example:mlp's module as a torch_xla capture: its mesh over devices in ORDER, GSPMD
    as its partitioner and a compiled module of its own."""
    from dataclasses import replace

    from shardscope.backend.program.capture_file import Capture, CapturedFunction
    from shardscope.backend.session.persistence import write_json

    function = CapturedFunction("step", "SyncTensorsGraph.1", mlp.mlir_text, 10, dict(mlp.mesh))
    function = replace(
        function, device_order=ORDER, partitioner="gspmd", compiled_hlo="HloModule step\n"
    )
    capture = Capture(["python", "t.py"], 8, "finished", [function], {}, "torch_xla")
    path = tmp_path_factory.mktemp("torch") / "cap.json"
    write_json(path, capture.to_json())
    return load_program(str(path))


def test_a_captures_device_order_framework_and_compiled_module_reopen_with_it(
    torch_capture, tmp_path
):
    s = Session()
    s.set_program(torch_capture)
    assert list(s.mesh.device_order) == ORDER
    s.save(tmp_path / "s.json")
    state = read_state(tmp_path / "s.json")
    program = unpack_program(state["program"], state["source"], "s.json")
    assert program.device_order == tuple(ORDER)
    assert (program.framework, program.partitioner) == ("torch_xla", "gspmd")
    assert program.compiled_hlo == "HloModule step\n"
    t = Session()
    t.set_program(program)  # the program's own mesh, in its own order
    assert list(t.mesh.device_order) == ORDER
    t.set_program(program, state=state)
    assert t.mesh == s.mesh


def test_a_program_saved_before_it_had_a_device_order_opens_as_jax(mlp):
    data = json.loads(json.dumps(pack_program(mlp)))
    for key in ("device_order", "framework", "partitioner", "compiled_hlo"):
        del data[key]
    assert check_program(data) is None
    program = unpack_program(data, "example:mlp", "s.json")
    assert (program.device_order, program.framework, program.partitioner) == (
        None,
        "jax",
        "shardy",
    )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"device_order": [0, 0, 1, 2, 3, 4, 5, 6]}, "not each of the ids 0..N-1 once"),
        ({"device_order": [1, 2, 3, 4, 5, 6, 7, 8]}, "not each of the ids 0..N-1 once"),
        ({"device_order": [0, 1, 2, 3]}, "another number of devices than its mesh"),
        ({"device_order": "0,1"}, "not a list of device ids"),
        ({"device_order": [0.0, 1]}, "not a list of device ids"),
        ({"device_order": [True, False]}, "not a list of device ids"),
        ({"framework": "tensorflow"}, "unknown framework 'tensorflow'"),
        ({"partitioner": 3}, "unknown partitioner 3"),
        ({"compiled_hlo": ["HloModule"]}, "compiled module is not text"),
        ({"compiled_hlo": "HloModule \x00"}, "compiled module holds"),
    ],
)
def test_a_malformed_device_order_framework_or_compiled_module_is_refused(
    torch_capture, tmp_path, change, problem
):
    s = Session()
    s.set_program(torch_capture)
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
    key=st.sampled_from(
        [
            *["name", "kind", "path", "mlir", "mesh", "specs", "params", "sources"],
            *["device_order", "framework", "partitioner", "compiled_hlo"],
        ]
    ),
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


@pytest.mark.parametrize(
    "site", [["x.py"], ["x.py", 0], ["x.py", "3"], [3, 4], "x.py:3", ["\udcff.py", 3]]
)
def test_a_malformed_definition_site_is_refused(mlp, site):
    data = {**pack_program(mlp), "def_site": site}
    assert check_program(data) == "a program definition site that is not [file, line]"


def test_the_definition_site_reopens_with_the_program(mlp):
    mlp.def_site = ("/work/train.py", 21)
    try:
        data = json.loads(json.dumps(pack_program(mlp)))
        assert check_program(data) is None
        assert unpack_program(data, "example:mlp", "s.json").def_site == ("/work/train.py", 21)
    finally:
        mlp.def_site = None
    data = json.loads(json.dumps(pack_program(mlp)))
    assert unpack_program(data, "example:mlp", "s.json").def_site is None


@pytest.fixture(scope="module")
def two_host_capture(mlp, tmp_path_factory):
    """example:mlp's module as a capture of a script run on 2 hosts (``capture --hosts 2``)."""
    from shardscope.backend.program.capture_file import Capture, CapturedFunction
    from shardscope.backend.session.persistence import write_json

    function = CapturedFunction("step", "jit_step", mlp.mlir_text, 2, dict(mlp.mesh))
    capture = Capture(["python", "t.py"], 8, "finished", [function], {}, hosts=2)
    path = tmp_path_factory.mktemp("hosts") / "cap.json"
    write_json(path, capture.to_json())
    return load_program(f"{path}#step")


def test_a_multi_host_captures_hosts_survive_saving_and_reopening(two_host_capture, tmp_path):
    from shardscope.backend.session.host_layout import HostLayout

    assert two_host_capture.hosts == 2
    s = Session()
    s.set_program(two_host_capture)
    assert s.hosts == HostLayout(2)  # opened laid over the hosts its script ran on
    s.save(tmp_path / "s.json")
    state = read_state(tmp_path / "s.json")
    program = unpack_program(state["program"], state["source"], "s.json")
    assert program.hosts == 2
    t = Session()
    t.set_program(program, state=state)
    assert t.hosts == HostLayout(2) and t.mesh == s.mesh
    t.set_program(program)  # the program's own layout, without the session's
    assert t.hosts == HostLayout(2)


def test_a_program_saved_before_it_had_hosts_opens_on_one(two_host_capture):
    from shardscope.backend.session.host_layout import HostLayout

    data = json.loads(json.dumps(pack_program(two_host_capture)))
    del data["hosts"]
    assert check_program(data) is None
    program = unpack_program(data, "cap.json#step", "s.json")
    assert program.hosts == 1
    s = Session()
    s.set_program(program)
    assert s.hosts == HostLayout()


@pytest.mark.parametrize(
    ("hosts", "problem"),
    [
        ("2", "host count '2' that is not a whole number from 1 to 64"),
        (0, "host count 0 that is not"),
        (True, "host count True that is not"),
        (65, "host count 65 that is not"),
        (3, "host count 3 that does not divide its mesh's devices"),
    ],
)
def test_a_malformed_host_count_is_refused(two_host_capture, tmp_path, hosts, problem):
    s = Session()
    s.set_program(two_host_capture)
    data = {**s.to_json()}
    data["program"] = {**data["program"], "hosts": hosts}
    path = write_input(tmp_path, "s.json", json.dumps(data))
    with pytest.raises(ShardscopeError, match="open a file saved by File > Save") as info:
        read_state(path)
    assert problem in str(info.value) and "\n" not in str(info.value)
