"""Opening, saving, exporting, recent files, the title and the restore prompt, as a user
drives them: through the File menu, with the file dialogs answered by the test. Further
down: what a session may run (it asks first), captured functions with odd names, and
files whose module text MLIR cannot read."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from shardscope.app.window.files import ask_restore
from shardscope.app.window.launch import start_window
from shardscope.backend.program.capture_file import Capture, CapturedFunction, capture_source
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import SetDimSpec
from shardscope.backend.session.persistence import write_json
from shardscope.backend.sharding.spec import Spec
from tests.support.dialogs import answer_picker
from tests.support.inputs import INPUTS, MLIR, PROGRAMS, write_input


def answer_open(monkeypatch, path):
    """The next Open dialogs return ``path``, as if the user picked it."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def answer_save(monkeypatch, path, asked=None):
    """The next Save dialogs return ``path``; their (caption, suggested name) go to ``asked``."""

    def get_save_file_name(parent, caption, name="", *rest, **kw):
        if asked is not None:
            asked.append((caption, Path(name).name))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save_file_name)


def test_bad_program_reports_and_keeps_session(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    session = window.session
    state = json.dumps(session.to_json(), sort_keys=True)
    window.open_program("example:does_not_exist")
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    assert window.messages.messages("error")
    assert json.dumps(session.to_json(), sort_keys=True) == state
    assert window.windowTitle().startswith("mlp")


def test_save_and_open_session(make_window, qtbot, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    window.graph.collapse_all()
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    assert window.qundo.isClean()

    other = make_window(None, propagate=False)
    assert other.open_session(path)
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.spec(x) == Spec.of("data", "model")
    assert other.graph.expanded() == frozenset()
    assert str(path) in other.settings.recent()


def test_recovery_file_restores_edits(make_window, qtbot, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    recovery = window.session.recovery_file
    state = Session.read(recovery)
    assert {"value": x, "name": "x", "spec": "data,model"} in state["specs"]

    restored = make_window(None, propagate=False)
    restored.restore_state(state)
    qtbot.waitUntil(lambda: restored.session.program is not None, timeout=60_000)
    assert restored.session.spec(x) == Spec.of("data", "model")


def test_export_png_and_svg(make_window, tmp_path, qtbot):
    window = make_window("example:mlp", propagate=False)
    assert window.files.export(tmp_path / "g.png")
    assert window.files.export(tmp_path / "g.svg")
    assert (tmp_path / "g.png").stat().st_size > 5000
    assert "<svg" in (tmp_path / "g.svg").read_text()[:2000]


def test_save_as_then_open_session_through_the_file_menu(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert window.windowTitle() == "mlp • — shardscope"
    path = tmp_path / "edited.json"
    asked = []
    answer_save(monkeypatch, path, asked)
    pick(window, "&File", "Save session &as…")
    assert asked == [("Save session", "session.json")]
    assert json.loads(path.read_text())["source"] == "example:mlp"
    assert window.windowTitle() == "mlp — shardscope"
    assert window.files.session_path == path
    assert f"saved session {path}" in window.messages.messages()

    # Save again: no dialog, the same file.
    drop_axis(window, x, 0, None)
    asked.clear()
    pick(window, "&File", "&Save session")
    assert asked == []
    assert {"value": x, "name": "x", "spec": "_,model"} in Session.read(path)["specs"]

    other = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(other, "&File", "Open &session…")
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.spec(x) == Spec.of(None, "model")
    assert other.windowTitle() == "mlp — shardscope"


def test_first_save_asks_for_a_file_and_cancel_saves_nothing(
    make_window, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    asked = []
    answer_save(monkeypatch, "", asked)  # the user cancels
    pick(window, "&File", "&Save session")
    assert asked == [("Save session", "session.json")]
    assert window.files.session_path is None
    assert not list(tmp_path.glob("*.json"))


def test_save_with_nothing_open_says_so(make_window, tmp_path, monkeypatch, pick):
    window = make_window(None, propagate=False)
    answer_save(monkeypatch, tmp_path / "empty.json")
    pick(window, "&File", "&Save session")
    assert "nothing to save: open a program first" in window.messages.messages("error")
    assert not (tmp_path / "empty.json").exists()


def test_open_program_through_the_file_menu(make_window, qtbot, monkeypatch, pick):
    window = make_window(None, propagate=False)
    assert window.windowTitle() == "no program — shardscope"
    source = PROGRAMS / "pytree.py"
    answer_open(monkeypatch, source)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert window.session.source == str(source)
    assert window.settings.recent()[0] == str(source)


def test_open_example_through_the_file_menu(make_window, qtbot, monkeypatch, pick):
    window = make_window(None, propagate=False)
    offered = []

    def get_item(parent, title, label, items, current, editable):
        offered.extend(items)
        return "attention", True

    monkeypatch.setattr(QInputDialog, "getItem", get_item)
    pick(window, "&File", "Open &example…")
    assert {"mlp", "attention"} <= set(offered)
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert window.session.source == "example:attention"
    assert window.windowTitle() == "attention — shardscope"


def test_export_through_the_file_menu_suggests_the_program_name(
    make_window, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    for text, fmt in (("Export view as &PNG…", "png"), ("Export view as S&VG…", "svg")):
        asked = []
        answer_save(monkeypatch, tmp_path / f"view.{fmt}", asked)
        pick(window, "&File", text)
        assert asked == [(f"Export view as {fmt.upper()}", f"mlp.{fmt}")]
        assert (tmp_path / f"view.{fmt}").stat().st_size > 1000
        assert f"exported {tmp_path / f'view.{fmt}'}" in window.messages.messages()


def test_recent_menu_lists_opened_files_and_reopens_them(make_window, qtbot, tmp_path, find_action):
    window = make_window("example:mlp", propagate=False)
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    recent = find_action(window, "&File", "Open &recent").menu()
    assert recent.isEnabled()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]

    fresh = make_window(None, propagate=False)
    recent = find_action(fresh, "&File", "Open &recent").menu()
    assert [a.text() for a in recent.actions()] == [str(path), "example:mlp"]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.session.program is not None, timeout=60_000)
    assert fresh.files.session_path is None
    # the program reopened goes to the top of the list
    assert [a.text() for a in recent.actions()] == ["example:mlp", str(path)]
    recent.actions()[1].trigger()
    qtbot.waitUntil(lambda: fresh.files.loading is None, timeout=60_000)
    assert fresh.files.session_path == path
    assert fresh.settings.recent() == [str(path), "example:mlp"]


def test_recent_menu_is_disabled_when_empty(make_window, find_action):
    window = make_window(None, propagate=False)
    recent = find_action(window, "&File", "Open &recent")
    assert recent.menu().actions() == []
    assert not recent.isEnabled()


def test_ask_restore_answers_from_the_environment(monkeypatch):
    state = {"source": "example:mlp", "specs": [{"value": 0, "name": "x", "spec": "data"}]}

    def no_dialog(*args, **kwargs):
        raise AssertionError("asked although the environment answered")

    monkeypatch.setattr(QMessageBox, "exec", no_dialog)
    for answer, restore in (("restore", True), ("yes", True), ("discard", False), ("NO", False)):
        monkeypatch.setenv("SHARDSCOPE_RECOVERY", answer)
        assert ask_restore(None, state) is restore


def test_ask_restore_asks_about_the_edits(monkeypatch, qtbot):
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "")
    shown = []

    def exec_(box):
        shown.append((box.windowTitle(), box.text()))
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    state = {"source": "example:mlp", "specs": [{}, {}]}
    assert ask_restore(None, state) is False
    assert shown == [
        (
            "Restore unsaved session?",
            "shardscope did not exit cleanly while editing example:mlp (2 tensor specs). "
            "Restore those edits?",
        )
    ]


# -- unsaved edits are never lost silently ---------------------------------------------


def answer_unsaved(monkeypatch, button):
    """The unsaved-edits prompt answers ``button``; the prompts shown go to the list returned."""
    monkeypatch.delenv("SHARDSCOPE_UNSAVED", raising=False)
    asked = []

    def question(parent, title, text, buttons, default):
        asked.append((title, text))
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def edited_mlp(make_window, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert not window.qundo.isClean()
    return window, x


def test_opening_a_program_over_unsaved_edits_asks_and_cancel_keeps_them(
    make_window, qtbot, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    asked = answer_unsaved(monkeypatch, QMessageBox.StandardButton.Cancel)
    monkeypatch.setattr(QInputDialog, "getItem", lambda *a, **k: ("attention", True))
    pick(window, "&File", "Open &example…")
    assert asked == [
        (
            "Unsaved edits",
            "mlp has edits that are not saved. Save them before opening example:attention?",
        )
    ]
    qtbot.wait(200)
    assert window.files.loading is None
    assert window.session.program.name == "mlp"
    assert window.session.spec(x) == Spec.of("data", "model")
    assert window.qundo.count() == 1 and window.windowTitle() == "mlp • — shardscope"


def test_opening_a_session_over_unsaved_edits_can_save_them_first(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    other = tmp_path / "other.json"
    assert window.files.save_session_to(other)
    drop_axis(window, x, 0, None)
    answer_unsaved(monkeypatch, QMessageBox.StandardButton.Save)
    answer_open(monkeypatch, other)
    pick(window, "&File", "Open &session…")
    # Save wrote the edit (dim 0 made replicated) to the session file before opening it
    assert {"value": x, "name": "x", "spec": "_,model"} in Session.read(other)["specs"]
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    assert window.qundo.isClean() and window.files.session_path == other


def window_state(window):
    """Everything a failed open must leave alone."""
    return (
        window.windowTitle(),
        window.files.session_path,
        window.session.program,
        json.dumps(window.session.to_json(), sort_keys=True),
        [window.qundo.text(i) for i in range(window.qundo.count())],
        window.qundo.index(),
        window.qundo.isClean(),
    )


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


def test_opening_a_program_after_a_session_does_not_save_over_the_session(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    saved = path.read_text()
    window.open_program("example:attention")
    qtbot.waitUntil(lambda: window.session.program.name == "attention", timeout=60_000)
    asked = []
    answer_save(monkeypatch, "", asked)
    pick(window, "&File", "&Save session")
    assert asked, "Save did not ask for a file for the new program"
    assert path.read_text() == saved


def test_the_recovery_file_exists_only_while_edits_are_unsaved(make_window, tmp_path, drop_axis):
    window = make_window("example:mlp", propagate=False)
    recovery = window.session.recovery_file
    assert not recovery.exists()  # nothing to recover right after loading
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert recovery.exists()
    window.qundo.undo()
    assert not recovery.exists()
    path = tmp_path / "mlp.json"
    drop_axis(window, x, 1, "model")
    assert window.files.save_session_to(path)
    assert not recovery.exists()
    drop_axis(window, x, 0, None)
    assert Session.read(recovery)["file"] == str(path)


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


def marked_program(folder, scale="2.0"):
    """A program that appends a line to ``ran.txt`` each time its code runs; its path."""
    marker = folder / "ran.txt"
    text = (
        "import jax\n"
        "import jax.numpy as jnp\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        "\n"
        "\n"
        "def step(x, w):\n"
        f"    return jnp.tanh(x @ w) * {scale}\n"
        "\n"
        "\n"
        "PROGRAM = step\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),"
        " jax.ShapeDtypeStruct((4, 4), jnp.float32))\n"
        "MESH = {'data': 2, 'model': 2}\n"
        "SPECS = {'x': [None, None]}\n"
    )
    return write_input(folder, "marked.py", text), marker


def runs(marker):
    return len(marker.read_text().splitlines()) if marker.exists() else 0


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


def test_run_source_again_is_the_explicit_way_to_run_it(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    program, marker = marked_program(tmp_path)
    window = make_window(program, propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 0, "data")
    session = tmp_path / "s.json"
    assert window.files.save_session_to(session)
    other = make_window(None, propagate=False)
    assert other.open_session(session)
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert runs(marker) == 1

    # The same source again, the file allowed by name: the code runs, nothing changed, the
    # session stays saved.
    monkeypatch.setenv("SHARDSCOPE_RUN_SOURCE", "run")
    pick(other, "&File", "&Run source again")
    qtbot.waitUntil(lambda: runs(marker) == 2 and other.files.loading is None, timeout=60_000)
    assert other.qundo.isClean() and other.session.spec(x) == Spec.of("data", None)
    assert not other.session.program.from_session

    # A changed source: the new program keeps the specs, and the session is unsaved.
    marked_program(tmp_path, scale="3.0")
    pick(other, "&File", "&Run source again")
    qtbot.waitUntil(lambda: runs(marker) == 3 and other.files.loading is None, timeout=60_000)
    assert "3.0" in other.session.program.mlir_text or "3.000" in other.session.program.mlir_text
    assert other.session.spec(x) == Spec.of("data", None)
    assert not other.qundo.isClean() and other.windowTitle() == "marked • — shardscope"
    assert other.files.session_path == session
    assert any("gives a different program" in m for m in other.messages.messages())


def test_run_source_again_with_nothing_open_says_so(make_window, pick):
    window = make_window(None, propagate=False)
    pick(window, "&File", "&Run source again")
    assert window.messages.messages("error") == ["nothing to run again: open a program first"]


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


def test_a_recovered_session_opens_from_its_saved_program(make_window, qtbot, tmp_path, drop_axis):
    program, marker = marked_program(tmp_path)
    window = make_window(program, propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 0, "data")
    state = Session.read(window.session.recovery_file)
    assert state["program"]["name"] == "marked"
    left = tmp_path / "recovery-left.json"
    left.write_text(window.session.recovery_file.read_text())
    restored = make_window(None, propagate=False)
    restored.files.restore_state(state, recovered_from=left)
    qtbot.waitUntil(lambda: restored.session.program is not None, timeout=60_000)
    assert runs(marker) == 1 and restored.session.spec(x) == Spec.of("data", None)
    assert not restored.qundo.isClean() and not left.exists()


def test_run_source_again_says_which_specs_the_new_program_has_no_tensor_for(
    make_window, qtbot, tmp_path, pick
):
    program, marker = marked_program(tmp_path)
    window = make_window(program, propagate=False)
    tanh = next(v for v in window.session.graph.values if v.display_name.startswith("tanh"))
    window.push(SetDimSpec(tanh.id, 0, "data"))
    Path(program).write_text(Path(program).read_text().replace("jnp.tanh(x @ w)", "(x @ w)"))
    pick(window, "&File", "&Run source again")
    qtbot.waitUntil(lambda: runs(marker) == 2 and window.files.loading is None, timeout=60_000)
    warning = window.messages.messages("warning")[-1]
    assert tanh.display_name in warning and "dropped" in warning
    assert not window.qundo.isClean()


def capture_of_two(tmp_path):
    """A capture file holding example:mlp as ``mlp`` and example:conflict as ``conflict``."""
    from shardscope.backend.program.capture_file import Capture, CapturedFunction
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.persistence import write_json

    functions = []
    for name in ("mlp", "conflict"):
        program = load_program(f"example:{name}")
        ops = len(program.graph.ops)
        functions.append(
            CapturedFunction(
                name, f"jit_{name}", program.mlir_text, ops, program.mesh, None, None, 1
            )
        )
    path = tmp_path / "cap.json"
    write_json(path, Capture(["python", "t.py"], 8, "finished", functions).to_json())
    return path, functions


def test_opening_a_capture_lets_the_user_pick_a_function(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    path, functions = capture_of_two(tmp_path)
    offered = []
    answer_picker(qtbot, offered, row=1)
    window = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    by_size = sorted(functions, key=lambda f: -f.ops)
    mesh = " \u00d7 ".join(f"{a}={n}" for a, n in by_size[0].mesh.items())
    assert offered[0][0][0] == by_size[0].name
    assert offered[0][0][2].startswith(mesh) and offered[0][0][3:] == [str(by_size[0].ops), "1"]
    assert window.session.program.name == by_size[1].name
    assert window.session.program.source == f"{path}#{by_size[1].name}"
    assert window.session.program.kind == "capture"


def test_cancelling_the_capture_picker_changes_nothing(make_window, qtbot, tmp_path, monkeypatch):
    path, _ = capture_of_two(tmp_path)
    window = make_window("example:mlp", propagate=False)
    before = window_state(window)
    answer_picker(qtbot, [])  # Cancel
    assert not window.files.open_file(str(path))
    qtbot.wait(100)
    assert window_state(window) == before and window.files.loading is None


def test_a_corrupt_capture_is_one_line_in_messages(make_window, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "shardscope-capture", "version": 1, "functions": 7}')
    window = make_window(None, propagate=False)
    assert not window.files.open_file(str(bad))
    (error,) = window.messages.messages("error")
    assert "capture the script again" in error and "\n" not in error


def test_run_source_again_on_a_program_from_the_api_says_where_to_run_it(
    make_window, qtbot, tmp_path, pick
):
    import shardscope

    result = shardscope.inspect(lambda x: x * 2, ShapeDtype((8, 4)), mesh={"data": 2})
    path = result.save(tmp_path / "api.json")
    window = make_window(None, propagate=False)
    assert window.open_session(path)
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    before = window_state(window)
    pick(window, "&File", "&Run source again")
    (error,) = window.messages.messages("error")
    assert "came from shardscope.inspect" in error and "show()" in error
    assert window_state(window) == before


def ShapeDtype(shape):
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct(shape, jnp.float32)


# -- nothing a session or recovery file names runs until the user allows that file ------
# Each test opens a session whose program entry names a Python file that appends a line to
# a marker file when imported, does what a user does, and checks the marker.

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


# -- captured functions with odd names: the picker, gui CAP.json#NAME, Open recent ---------

NAMES = ["a#b c", "what?x=1", "two\nlines", "x.json"]
# What titles and messages call them: one line each.
SHOWN = ["a#b c", "what?x=1", "two%0Alines", "x.json"]


def capture_of_odd_names(tmp_path):
    """A capture file of ``plain.mlir`` under each of NAMES, the first the largest."""
    text = (MLIR / "plain.mlir").read_text()
    functions = [
        CapturedFunction(name, "jit_f", text, 10 - i, {"data": 8}, None, None, 1)
        for i, name in enumerate(NAMES)
    ]
    path = tmp_path / "odd caps.json"
    write_json(path, Capture(["python", "t.py"], 8, "finished", functions).to_json())
    return path


@pytest.mark.parametrize("chosen", range(len(NAMES)))
def test_the_capture_picker_opens_the_function_picked(
    make_window, qtbot, tmp_path, monkeypatch, pick, find_action, chosen
):
    path = capture_of_odd_names(tmp_path)
    offered = []
    answer_picker(qtbot, offered, row=chosen)
    window = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    assert [row[0] for row in offered[0]] == [
        "a%23b c",
        "what%3Fx=1",
        "two%0Alines",
        "x.json",
    ]
    program = window.session.program
    assert program.name == SHOWN[chosen] and program.kind == "capture"
    assert program.source == capture_source(path, NAMES[chosen])
    assert not window.messages.messages("error")

    # Open recent reopens that function, not the capture's picker or a session.
    other = make_window(None, propagate=False)
    monkeypatch.setattr(
        "shardscope.app.window.files.pick_captured", lambda *a, **k: pytest.fail("asked again")
    )
    (recent,) = [a for a in other.files.recent_menu.actions() if a.text() == program.source]
    recent.trigger()
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.program.name == SHOWN[chosen]
    assert not other.messages.messages("error")


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("{path}#a#b c", "a#b c"),
        ("{path}#a%23b c", "a#b c"),
        ("{path}#x.json", "x.json"),
        ("{path}#two%0Alines", "two%0Alines"),
        ("{path}#what%3Fx=1", "what?x=1"),
    ],
)
def test_gui_of_a_capture_function_opens_it(qtbot, tmp_path, monkeypatch, source, name):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path / "state"))
    path = capture_of_odd_names(tmp_path)
    window = start_window(source.format(path=path))
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        assert window.session.program.name == name
        assert not window.messages.messages("error")
    finally:
        window.close()
        window.runner.wait(30_000)


# -- module text MLIR cannot read, in sessions, recovery and capture files -----------------

HOSTILE = INPUTS / "hostile"


def spoiled_session(window, spoil: str) -> str:
    """The JSON of ``window``'s session with ``spoil`` put into its saved module's text."""
    state = window.session.to_json()
    mlir = state["program"]["mlir"]
    state["program"]["mlir"] = mlir.replace("func.func", f"func.func{spoil}", 1)
    return json.dumps(state)


SPOILS = [("\udcff", "a lone surrogate \\udcff at line"), ("\x00", "a NUL character at line")]


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


@pytest.mark.parametrize(("spoil", "says"), SPOILS)
def test_a_recovery_file_with_unreadable_module_text_is_set_aside_at_start(
    make_window, qtbot, tmp_path, monkeypatch, spoil, says
):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SHARDSCOPE_RECOVERY", "restore")
    text = spoiled_session(make_window("example:mlp", propagate=False), spoil)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    recovery = tmp_path / f"recovery-{gone.pid}-1.json"
    recovery.write_text(text)

    window = start_window("example:attention")
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        (error,) = window.messages.messages("error")
        assert f"session {recovery} has a program whose module text holds {says}" in error
        assert f"(recovery file set aside as {recovery.name}.bad)" in error
        assert "\n" not in error
        assert window.session.program.name == "attention"
        assert not recovery.exists() and (tmp_path / f"{recovery.name}.bad").exists()
    finally:
        window.close()
        window.runner.wait(30_000)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("capture_surrogate.json", "function 0 ('f') has module text with a lone surrogate"),
        ("capture_nul.json", "function 0 ('f') has module text with a NUL character"),
    ],
)
def test_opening_a_capture_with_unreadable_module_text_is_one_line(
    make_window, qtbot, monkeypatch, pick, name, says
):
    window = make_window("example:mlp", propagate=False)
    before = window_state(window)
    path = HOSTILE / name
    answer_open(monkeypatch, path)
    pick(window, "&File", "&Open program…")
    qtbot.wait(200)
    qtbot.waitUntil(lambda: window.files.loading is None, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert error.startswith(f"{path}: {says}") and "\n" not in error
    assert "capture the script again" in error
    assert window_state(window) == before


def test_a_session_with_hosts_saves_and_reopens_laid_out_as_it_was(
    make_window, qtbot, tmp_path, monkeypatch, pick
):
    window = make_window("example:mlp", propagate=False)
    editor = window.mesh_editor
    editor.hosts_spin.setValue(2)
    editor.factor_spin(1).setValue(2)  # model across hosts: 4 hosts, DCN data=2,model=2
    layout, mesh = window.session.hosts, window.session.mesh
    assert layout.count == 4 and not mesh.is_iota
    path = tmp_path / "hosts.json"
    answer_save(monkeypatch, path)
    pick(window, "&File", "Save session &as…")
    assert json.loads(path.read_text())["hosts"] == layout.to_json()

    other = make_window(None, propagate=False)
    answer_open(monkeypatch, path)
    pick(other, "&File", "Open &session…")
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.hosts == layout and other.session.mesh == mesh
    shown = other.mesh_editor
    assert shown.hosts_spin.value() == 4
    assert [shown.link_text(r) for r in range(2)] == ["both", "DCN"]
    assert shown.grid.boundaries() == window.mesh_editor.grid.boundaries() != []
