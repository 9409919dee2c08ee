"""Nothing a session or recovery file names runs until the user allows that file."""

import json

import pytest
from PySide6.QtWidgets import QMessageBox

from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from tests.support.file_menu import (
    answer_open,
    marked_program,
    runs,
    window_state,
)
from tests.support.inputs import write_input


def test_an_old_session_without_its_program_runs_python_only_if_the_user_agrees(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    program, marker = marked_program(tmp_path)
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "format": "shardscope-session",
                "version": 1,
                "source": program,
                "mesh": None,
                "specs": [{"value": 0, "name": "x", "spec": "data,_"}],
                "view": {},
            }
        )
    )
    window = make_window("example:mlp", propagate=False)
    before = window_state(window)
    monkeypatch.setenv("SHARDSCOPE_RUN_SOURCE", "cancel")
    answer_open(monkeypatch, old)
    pick(window, "&File", "Open &session…")
    qtbot.wait(300)
    assert runs(marker) == 0 and window_state(window) == before
    warning = window.messages.messages("warning")[-1]
    assert "saved without its program" in warning and program in warning

    asked = []

    def question(parent, title, text, *rest):
        asked.append((title, text))
        return QMessageBox.StandardButton.Yes

    monkeypatch.delenv("SHARDSCOPE_RUN_SOURCE")
    monkeypatch.setattr(QMessageBox, "question", question)
    pick(window, "&File", "Open &session…")
    qtbot.waitUntil(lambda: window.session.program.name == "marked", timeout=60_000)
    assert runs(marker) == 1
    assert asked == [
        (
            "Run the program?",
            f"{old} was saved without its program, so opening it runs {program}. This "
            "imports and runs its Python code. Run marked.py?",
        )
    ]
    x = window.session.graph.value_by_name("x").id
    assert window.session.spec(x) == Spec.of("data", None)


def test_an_old_session_of_an_example_opens_without_asking(make_window, qtbot, tmp_path):
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps({"format": "shardscope-session", "version": 1, "source": "example:mlp"})
    )
    window = make_window(None, propagate=False)
    assert window.open_session(old)
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert window.session.program.name == "mlp"


SHARD_MAP_PROGRAM = """
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

open({marker!r}, "a").write("ran\\n")


def shmap(x, w):
    @partial(
        jax.shard_map,
        in_specs=(P("data", None), P()),
        out_specs=P("data", None),
        axis_names={{"data"}},
    )
    def local(a, b):
        return jnp.tanh(a @ b)

    return local(x, w) * 2.0


PROGRAM = shmap
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((16, 8), jnp.float32),
    jax.ShapeDtypeStruct((8, 8), jnp.float32),
)
MESH = {{"data": 2, "model": 2}}
"""


PLAIN_PROGRAM = """
import jax
import jax.numpy as jnp

open({marker!r}, "a").write("ran\\n")


def step(x, w):
    return jnp.tanh(x @ w)


PROGRAM = step
EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 4), jnp.float32),
    jax.ShapeDtypeStruct((4, 4), jnp.float32),
)
MESH = {{"data": 2, "model": 2}}
"""


def hostile_session(make_window, qtbot, tmp_path, text=PLAIN_PROGRAM, **program_entry):
    """A session saved from a program that marks each import, the marker then cleared, and
    its program entry changed by ``program_entry`` (as a hostile author would); the
    session's path, the program's path and the marker."""
    marker = tmp_path / "ran.txt"
    path = write_input(tmp_path, "payload.py", text.format(marker=str(marker)))
    window = make_window(path, propagate=False)
    assert runs(marker) == 1
    session = tmp_path / "hostile.json"
    assert window.files.save_session_to(session)
    marker.unlink()
    data = json.loads(session.read_text())
    data["program"].update(program_entry)
    session.write_text(json.dumps(data))
    return session, path, marker


def open_hostile_session(make_window, qtbot, session):
    window = make_window(None)
    assert window.open_session(session)
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    qtbot.waitUntil(lambda: window.propagation.count > 0, timeout=60_000)
    return window


def answer(monkeypatch, button):
    """Answer the window's questions with ``button``; the questions asked."""
    asked = []
    monkeypatch.delenv("SHARDSCOPE_RUN_SOURCE", raising=False)

    def question(parent, title, text, *rest):
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_run_on_devices_asks_before_running_a_file_the_session_names(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    session, path, marker = hostile_session(make_window, qtbot, tmp_path)
    window = open_hostile_session(make_window, qtbot, session)
    assert runs(marker) == 0
    specs = dict(window.session.specs)

    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    pick(window, "&Propagation", "&Run on devices")
    # Read at once: a propagation that ends later writes its own status line.
    assert window.statusBar().currentMessage() == "not run: payload.py was not allowed"
    qtbot.wait(500)
    assert runs(marker) == 0, "Run on devices ran the session's file without asking"
    assert len(asked) == 1 and path in asked[0] and "session file names" in asked[0]
    assert not window.run.running and window.run.count == 0
    assert dict(window.session.specs) == specs
    warning = window.messages.messages("warning")[-1]
    assert warning.startswith(f"not run: {path} came from the session file")

    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    pick(window, "&Propagation", "&Run on devices")
    qtbot.waitUntil(lambda: window.run.count == 1 or window.run.failures, timeout=120_000)
    assert window.run.count == 1 and len(asked) == 1
    assert runs(marker) >= 1, "the allowed file did not run"

    # Allowed once for this program: a second run does not ask again.
    pick(window, "&Propagation", "&Run on devices")
    qtbot.waitUntil(lambda: window.run.count == 2 or window.run.failures, timeout=120_000)
    assert window.run.count == 2 and len(asked) == 1


def test_a_recovery_file_gets_the_same_question(make_window, qtbot, tmp_path, monkeypatch, pick):
    session, path, marker = hostile_session(make_window, qtbot, tmp_path)
    state = Session.read(session)
    window = make_window(None)
    window.files.restore_state(state, recovered_from=tmp_path / "gone.json")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    pick(window, "&Propagation", "&Run on devices")
    qtbot.wait(500)
    assert runs(marker) == 0 and len(asked) == 1 and path in asked[0]


def test_an_example_in_a_session_runs_the_built_in_example_not_the_path_it_names(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    session, path, marker = hostile_session(
        make_window, qtbot, tmp_path, kind="example", name="mlp", path=None
    )
    data = json.loads(session.read_text())
    data["program"]["path"] = str(tmp_path / "payload.py")
    data["source"] = "example:mlp"
    session.write_text(json.dumps(data))
    window = open_hostile_session(make_window, qtbot, session)
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    pick(window, "&Propagation", "&Run on devices")
    qtbot.waitUntil(lambda: window.run.count == 1 or window.run.failures, timeout=120_000)
    assert runs(marker) == 0, "an example from a session ran the file the session named"
    assert asked == []
    # What ran is the built-in mlp, which this program's arguments do not fit: a one-line
    # failure or a result, never the payload.
    assert window.run.count == 1 or window.messages.messages("error")


@pytest.mark.parametrize("kind", ["mlir", "capture", "api"])
def test_a_session_program_of_a_data_kind_never_runs_the_path_it_names(
    make_window, qtbot, tmp_path, monkeypatch, pick, kind
):
    session, path, marker = hostile_session(make_window, qtbot, tmp_path, kind=kind)
    window = open_hostile_session(make_window, qtbot, session)
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    pick(window, "&Propagation", "&Run on devices")
    qtbot.waitUntil(lambda: window.run.count == 1 or window.run.failures, timeout=60_000)
    # Its module ran on seeded inputs; no Python of the path it names did.
    assert runs(marker) == 0 and asked == [] and window.run.count == 1
    assert window.run.panel.result.inputs == "seeded"


def test_run_source_again_asks_for_a_file_the_session_names(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    session, path, marker = hostile_session(make_window, qtbot, tmp_path)
    window = open_hostile_session(make_window, qtbot, session)
    before = window.session.program
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    pick(window, "&File", "&Run source again")
    qtbot.wait(500)
    assert runs(marker) == 0 and window.session.program is before
    assert len(asked) == 1 and path in asked[0] and "Run source again" in asked[0]
    assert "not run:" in window.messages.messages("warning")[-1]

    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    pick(window, "&File", "&Run source again")
    qtbot.waitUntil(lambda: window.session.program is not before, timeout=60_000)
    assert runs(marker) == 1 and not window.session.program.from_session


def test_gspmd_comparison_of_a_shard_map_session_does_not_trace_its_file(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    session, path, marker = hostile_session(make_window, qtbot, tmp_path, SHARD_MAP_PROGRAM)
    window = open_hostile_session(make_window, qtbot, session)
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    gspmd = window.gspmd.view
    pick(window, "&View", "Compare with &GSPMD")
    qtbot.waitUntil(lambda: gspmd.state not in ("running", "waiting"), timeout=120_000)
    assert runs(marker) == 0, "the GSPMD comparison traced the session's file"
    assert gspmd.state == "failed" and asked == []
    error = window.messages.messages("error")[-1]
    assert path in error and "which a session file names" in error
    assert "Run source again" in error
