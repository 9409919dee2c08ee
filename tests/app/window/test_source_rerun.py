"""File > Run source again: the explicit way to run a program's source anew."""

from pathlib import Path

from shardscope.backend.session.edits import SetDimSpec
from shardscope.backend.sharding.spec import Spec
from tests.support.file_menu import (
    marked_program,
    runs,
    window_state,
)


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
