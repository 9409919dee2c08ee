"""Opening, saving, exporting, recent files, the title and the restore prompt, as a user
drives them: through the File menu, with the file dialogs answered by the test."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from shardscope.app.window.files import ask_restore
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from tests.support.inputs import PROGRAMS, write_input


def answer_open(monkeypatch, path):
    """The next Open dialogs return ``path``, as if the user picked it."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def answer_save(monkeypatch, path, asked=None):
    """The next Save dialogs return ``path``; their (caption, suggested name) go to ``asked``."""

    def get_save_file_name(parent, caption, name="", *rest, **kw):
        if asked is not None:
            asked.append((caption, name))
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


def bad_sessions(x):
    """(what is wrong, the session JSON, what the one-line error says)."""
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
        ("newer version", {**good, "version": 2}, "has version 2"),
        ("no version", {k: v for k, v in good.items() if k != "version"}, "version None"),
        ("source not text", {**good, "source": ["example:mlp"]}, "not text"),
        ("view not an object", {**good, "view": []}, "view that is not an object"),
        ("view frames not a list", {**good, "view": {"frames": "main"}}, "view frames"),
        ("bad view frame", {**good, "view": {"frames": ["main/opX"]}}, "unknown form"),
        ("expanded not per frame", {**good, "view": {"expanded": ["a"]}}, "expanded scopes"),
        ("program that fails", {**good, "source": "example:does_not_exist"}, "does_not_exist"),
    ]


def test_a_failed_session_open_leaves_the_window_exactly_as_it_was(
    make_window, qtbot, tmp_path, monkeypatch, pick, drop_axis
):
    window, x = edited_mlp(make_window, drop_axis)
    mine = tmp_path / "mine.json"
    assert window.files.save_session_to(mine)
    drop_axis(window, x, 0, None)
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "discard")
    before = window_state(window)
    for what, data, says in bad_sessions(x):
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
    assert json.loads(bad.read_text()) == bad_sessions(x)[-1][1]
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
