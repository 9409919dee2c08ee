"""What a load does with what it loads: a program that fails or a session that does not fit
is one line in Messages and leaves the window exactly as it was; a saved session opens
from its saved program without running code."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from tests.support.file_menu import (
    SPOILS,
    answer_open,
    edited_mlp,
    marked_program,
    runs,
    spoiled_session,
    window_state,
)
from tests.support.inputs import write_input


def test_bad_program_reports_and_keeps_session(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    session = window.session
    state = json.dumps(session.to_json(), sort_keys=True)
    window.open_program("example:does_not_exist")
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    assert window.messages.messages("error")
    assert json.dumps(session.to_json(), sort_keys=True) == state
    assert window.windowTitle().startswith("mlp")


def bad_sessions(x, program):
    """(what is wrong, the session JSON, what the one-line error says); ``program``: the
    saved-program entry of a good session."""
    good = {
        "format": "shardscope-session",
        "version": 1,
        "source": "example:mlp",
        "mesh": None,
        "specs": [],
        "view": {},
    }
    return [
        (
            "wrong rank for another program",
            {**good, "specs": [{"value": x, "name": None, "spec": "data,model,_,_"}]},
            "does not fit",
        ),
        (
            "unknown axis",
            {**good, "specs": [{"value": x, "name": "x", "spec": "pipe"}]},
            "does not fit",
        ),
        ("specs not a list", {**good, "specs": "x"}, "specs that are not a list"),
        ("spec entry not an object", {**good, "specs": [3]}, "not an object"),
        (
            "spec of a bad type",
            {**good, "specs": [{"value": x, "name": "x", "spec": 5}]},
            "unknown form",
        ),
        ("mesh not an object", {**good, "mesh": [1]}, "mesh that is not an object"),
        ("bad mesh", {**good, "mesh": {"axes": [{"name": "a", "size": -3}]}}, "bad mesh"),
        ("newer version", {**good, "version": 3}, "has version 3"),
        ("no version", {k: v for k, v in good.items() if k != "version"}, "version None"),
        ("source not text", {**good, "source": ["example:mlp"]}, "not text"),
        ("view not an object", {**good, "view": []}, "view that is not an object"),
        ("view frames not a list", {**good, "view": {"frames": "main"}}, "view frames"),
        ("bad view frame", {**good, "view": {"frames": ["main/opX"]}}, "unknown form"),
        ("expanded not per frame", {**good, "view": {"expanded": ["a"]}}, "expanded scopes"),
        ("program that fails", {**good, "source": "example:does_not_exist"}, "does_not_exist"),
        (
            "saved program that does not parse",
            {**good, "version": 2, "program": {**program, "mlir": "module {"}},
            "malformed MLIR",
        ),
        (
            "saved program of the wrong form",
            {**good, "version": 2, "program": {**program, "kind": "shell"}},
            "unknown kind",
        ),
        (
            "saved program that is not this session's",
            {**good, "version": 2, "program": {**program, "mlir": OTHER_MODULE}},
            "saved for another program",
        ),
    ]


OTHER_MODULE = """module @jit_f {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    return %arg0 : tensor<3xf32>
  }
}"""


def test_a_failed_session_open_leaves_the_window_exactly_as_it_was(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    mine = tmp_path / "mine.json"
    assert window.files.save_session_to(mine)
    drop_axis(window, x, 0, None)
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "discard")
    before = window_state(window)
    program = window.session.to_json()["program"]
    bad_x = window.session.graph.value_by_name("x").id
    for what, data, says in bad_sessions(x, program):
        if what == "saved program that is not this session's":
            data["specs"] = [{"value": bad_x, "name": "x", "spec": "data,model"}]
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        errors = len(window.messages.messages("error"))
        answer_open(monkeypatch, bad)
        pick(window, "&File", "Open &session…")
        qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
        qtbot.wait(50)
        new = window.messages.messages("error")[errors:]
        assert len(new) == 1 and "\n" not in new[0] and says in new[0], (what, new)
        assert window_state(window) == before, what
    # Save still goes to the session that is open, never to the file that failed
    pick(window, "&File", "&Save session")
    assert json.loads(bad.read_text())["program"]["mlir"] == OTHER_MODULE
    assert {"value": x, "name": "x", "spec": "_,model"} in Session.read(mine)["specs"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


_FRAME = st.sampled_from(["main", "relu", "main/op4.r0", "main/op999.r0", "main/op-1.r0", "nope"])


_VIEW = st.fixed_dictionaries(
    {},
    optional={
        "frames": st.lists(_FRAME, max_size=3) | _JSON,
        "expanded": st.dictionaries(_FRAME, st.lists(st.sampled_from(["layer1", "x", ""]))) | _JSON,
        "zoom": _JSON,
    },
)


_SPEC = st.fixed_dictionaries(
    {
        "value": st.integers(-1, 30),
        "name": st.sampled_from(["x", "params['w1']", None, "zz"]),
        "spec": st.sampled_from(["data", "_,model", "data,model,_", "model?@p1,_", "pipe", ""]),
    }
)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(view=_VIEW, specs=st.lists(_SPEC, max_size=3))
def test_fuzzed_sessions_open_or_fail_in_one_line_and_the_window_lives(
    make_window, qtbot, tmp_path, view, specs
):
    # one window for every example: a window per example would take minutes
    window = getattr(make_window, "fuzz_window", None)
    if window is None:
        window = make_window.fuzz_window = make_window("example:mlp", propagate=False)
    window.undo.clear()
    path = tmp_path / "fuzz.json"
    data = {
        "format": "shardscope-session",
        "version": 1,
        "source": "example:mlp",
        "mesh": None,
        "specs": specs,
        "view": view,
    }
    path.write_text(json.dumps(data))
    errors = len(window.messages.messages("error"))
    before = window_state(window)
    if window.open_session(path):
        qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    qtbot.wait(20)
    new = window.messages.messages("error")[errors:]
    if new:
        assert len(new) == 1 and "\n" not in new[0], new
        assert window_state(window) == before
    else:
        assert window.files.session_path == path
    window.graph.viewport().repaint()
    window.graph.fit()


def test_unknown_names_in_a_programs_specs_are_reported(make_window, tmp_path):
    path = write_input(
        tmp_path,
        "typo.py",
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import PartitionSpec as P\n\n"
        "def f(x, w):\n    return x @ w\n\n"
        "PROGRAM = f\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 16), jnp.float32),"
        " jax.ShapeDtypeStruct((16, 4), jnp.float32))\n"
        "MESH = {'data': 2}\n"
        "SPECS = {'x': P('data'), 'wieghts': P(None, 'data')}\n",
    )
    window = make_window(path, propagate=False)
    warnings = window.messages.messages("warning")
    assert any("'wieghts'" in w and "left out" in w and "x, w" in w for w in warnings), warnings
    x = window.session.graph.value_by_name("x").id
    assert window.session.spec(x) == Spec.of("data")


def test_opening_a_saved_session_runs_no_code_and_shows_the_saved_source(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    program, marker = marked_program(tmp_path)
    window = make_window(program, propagate=False)
    assert runs(marker) == 1
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 0, "data")
    session = tmp_path / "review.json"
    assert window.files.save_session_to(session)
    Path(program).unlink()  # the reviewer has only the session file

    other = make_window(None, propagate=False)
    answer_open(monkeypatch, session)
    pick(other, "&File", "Open &session…")
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert runs(marker) == 1, "opening the session ran the program"
    assert other.session.spec(x) == Spec.of("data", None)
    assert other.windowTitle() == "marked — shardscope" and other.qundo.isClean()
    assert any("no code runs" in m for m in other.messages.messages())
    tanh = next(op for op in other.session.graph.ops if op.name == "stablehlo.tanh")
    other.select_op(tanh.id)
    view = other.source_view
    assert view.header.text() == (
        f"marked.py:{tanh.source_line}  —  stablehlo.tanh  (as saved with the session)"
    )
    shown = view.text.toPlainText().split("\n")
    assert shown[tanh.source_line - 1] == "    return jnp.tanh(x @ w) * 2.0"


@pytest.mark.parametrize(("spoil", "says"), SPOILS)
def test_opening_a_session_with_unreadable_module_text_is_one_line(
    make_window, qtbot, tmp_path, monkeypatch, pick, spoil, says
):
    window = make_window("example:mlp", propagate=False)
    bad = tmp_path / "bad.json"
    bad.write_text(spoiled_session(window, spoil))
    before = window_state(window)
    answer_open(monkeypatch, bad)
    pick(window, "&File", "Open &session…")
    qtbot.wait(200)
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert f"session {bad} has a program whose module text holds {says}" in error
    assert "open a file saved by File > Save" in error and "\n" not in error
    assert window_state(window) == before
