"""The window compiles each propagation with XLA, off its thread: the compiled
collectives are ``jax.jit(...).lower(...).compile()``'s, a newer edit kills the older
compile's worker, a failed compile says so and leaves the session as it was, and
nothing outlives the window."""

import os
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import Qt

from shardscope.app.window.compiling import WindowCompiler
from shardscope.backend.hlo.hlo_collectives import read_collectives
from shardscope.backend.run.compiled import COMPILE_CANCELLED, MAX_CPU_DEVICES, WORKER
from shardscope.backend.session.edits import SetMesh
from shardscope.backend.sharding.mesh import parse_mesh
from tests.support.compile_oracle import compiled_text
from tests.support.processes import gone_within


def compile_workers() -> set[int]:
    """The compile workers this process started (their relays and the workers proper)."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if WORKER.encode() not in cmdline or state in ("Z", "X"):
            continue
        pid = int(entry.name)
        while pid > 1:
            try:
                pid = int(
                    (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except OSError:
                break
            if pid == me:
                found.add(int(entry.name))
                break
    return found


def _stat(pid: int) -> list[str]:
    return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()


def niceness(pid: int) -> int:
    return int(_stat(pid)[16])


def parent(pid: int) -> int:
    return int(_stat(pid)[1])


def kinds(collectives) -> list[tuple[str, int]]:
    return sorted(
        (c["kind"], c["operands"]) if isinstance(c, dict) else (c.kind, c.operands)
        for c in collectives
    )


def jax_compiles(window) -> list[tuple[str, int]]:
    """The collectives of ``jax.jit(PROGRAM)`` compiled on the session's mesh with the
    session's argument specs."""
    session = window.session
    program = session.program
    graph = session.graph
    specs = {}
    for name in program.arg_names:
        spec = session.spec(graph.value_by_name(name).id)
        if spec is not None:
            specs[name] = spec.to_json()
    stand_in = SimpleNamespace(
        path=program.path,
        params=program.params,
        mesh=session.mesh.shape,
        arg_names=program.arg_names,
        specs=specs,
    )
    return kinds(read_collectives(compiled_text(stand_in)))


def watch_compiled(window) -> list:
    fired = []
    window.session.events.compiled.connect(fired.append)
    return fired


def wait_compiled(qtbot, window, fired, timeout=90_000):
    """Wait until the session's current propagation was compiled."""
    qtbot.waitUntil(
        lambda: (
            window.session.propagation is not None
            and any(a.propagation is window.session.propagation for a in fired)
            and not window.propagation.pending
            and not window.runner.busy
        ),
        timeout=timeout,
    )
    return window.session.analysis


def test_an_edit_is_compiled_as_jax_compiles_it(make_window, qtbot, drop_axis):
    window = make_window("example:conflict")
    fired = watch_compiled(window)
    first = wait_compiled(qtbot, window, fired)
    assert kinds(first.compiled_collectives) == jax_compiles(window)
    fired.clear()
    compiler = window.propagation.compiler
    spare = compiler.spare_pending  # started once the first compile was done
    assert spare is not None and len(compile_workers()) == 2  # its relay and itself
    # Background work: the worker yields the processors to the window and to Shardy.
    workers = compile_workers()
    (worker,) = [pid for pid in workers if parent(pid) in workers]  # not its relay
    assert niceness(worker) == min(os.nice(0) + 10, 19)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")  # the undoable edit a drop makes
    assert compiler.job.pending is spare and compiler.spare_pending is None
    assert window.propagation.compiler.indicator.showing
    assert window.propagation.compiler.indicator.label.text() == "compiling for 8 devices…"
    result = wait_compiled(qtbot, window, fired)
    assert result is not first and result.compile_error is None
    assert kinds(result.compiled_collectives) == jax_compiles(window)
    assert result.memory is not None and result.memory["peak"] > 0
    # once, for the current result
    assert [a.propagation for a in fired] == [result.propagation]
    assert not window.propagation.compiler.indicator.showing
    assert window.statusBar().currentMessage().startswith("compiled in ")


def test_a_newer_edit_kills_the_older_compile_and_undo_recompiles(make_window, qtbot, drop_axis):
    window = make_window("example:mlp")
    fired = watch_compiled(window)
    before = wait_compiled(qtbot, window, fired)
    expected_before = kinds(before.compiled_collectives)
    applied = []
    window.session.events.propagation.connect(lambda r: r is not None and applied.append(r))
    fired.clear()
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    qtbot.waitUntil(lambda: bool(compile_workers()), timeout=30_000)
    older = compile_workers()
    drop_axis(window, x, 0, None)  # while the first compiles
    assert all(gone_within(pid, 3) for pid in older)
    result = wait_compiled(qtbot, window, fired)
    # Only the newest propagation was compiled: the older compile's report never came.
    assert [a.propagation for a in fired] == [result.propagation] == applied[-1:]
    assert kinds(result.compiled_collectives) == jax_compiles(window)

    fired.clear()
    window.undo.qstack.undo()
    window.undo.qstack.undo()
    restored = wait_compiled(qtbot, window, fired)
    assert kinds(restored.compiled_collectives) == expected_before == jax_compiles(window)


def test_a_failed_compile_says_so_and_leaves_the_session_as_it_was(make_window, qtbot, drop_axis):
    window = make_window("example:mlp")
    fired = watch_compiled(window)
    wait_compiled(qtbot, window, fired)
    window.propagation.compiler.timeout = 0.001
    fired.clear()
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    result = wait_compiled(qtbot, window, fired)
    assert result.compiled_collectives is None and result.compile_error
    assert "\n" not in result.compile_error and "did not finish" in result.compile_error
    # The fix it names is one the user can take from the window: the command line's.
    assert result.compile_error.endswith("python main.py propagate PROGRAM --timeout 900")
    warnings = window.messages.messages("warning")
    assert result.compile_error in warnings and "XLA compile" in result.compile_error
    assert window.messages.messages("error") == []
    # The propagation itself stands: its shardings show.
    assert window.session.spec(x).to_json() == ["data", "model"]
    assert "?" not in window.graph.badge_text(x)
    assert not compile_workers()
    # where the user looks: the Collectives dock, which waited for the compile, comes up
    # and says it failed, once, with the fix
    dock = window.docks["dock_collectives"]
    qtbot.waitUntil(lambda: not dock.visibleRegion().isEmpty(), timeout=10_000)
    status = window.collectives.status.text()
    assert status == result.compile_error[:1].upper() + result.compile_error[1:]
    assert status.lower().count("the xla compile") == 1 and status.endswith("--timeout 900")
    assert window.collectives.header.text().endswith("the compile failed")
    assert window.statusBar().currentMessage() == (
        "the XLA compile failed: the Collectives dock says why"
    )


def test_cancel_ends_the_compile_and_the_result_says_so(make_window, qtbot, drop_axis):
    window = make_window("example:mlp")
    fired = watch_compiled(window)
    wait_compiled(qtbot, window, fired)
    fired.clear()
    compiler: WindowCompiler = window.propagation.compiler
    drop_axis(window, window.session.graph.value_by_name("x").id, 1, "model")
    qtbot.waitUntil(lambda: bool(compile_workers()), timeout=30_000)
    workers = compile_workers()
    compiler.indicator.cancel_button.click()
    result = wait_compiled(qtbot, window, fired)
    assert result.compile_error == COMPILE_CANCELLED and result.compiled_collectives is None
    assert all(gone_within(pid, 3) for pid in workers)


def test_a_mesh_over_the_limit_gets_the_note_and_no_compile(make_window, qtbot, wait_idle):
    window = make_window("example:mlp")
    fired = watch_compiled(window)
    wait_compiled(qtbot, window, fired)
    fired.clear()
    before = window.propagation.count
    window.push(SetMesh(parse_mesh(f"data={MAX_CPU_DEVICES},model=2")))
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    result = window.session.analysis
    # The compile step says it was not made, and no compile failed.
    assert [a.propagation for a in fired] == [result.propagation]
    assert result.compiled_collectives is None and result.compile_error is None
    assert not window.propagation.compiler.compiling and not compile_workers()
    notes = [w for w in window.messages.messages("warning") if "compiled collectives" in w]
    assert len(notes) == 1 and "smaller mesh" in notes[0] and notes[0] in result.warnings


def test_closing_the_window_while_it_compiles_leaves_no_process(make_window, qtbot, drop_axis):
    window = make_window("example:mlp")
    drop_axis(window, window.session.graph.value_by_name("x").id, 1, "model")
    qtbot.waitUntil(lambda: bool(compile_workers()), timeout=30_000)
    workers = compile_workers()
    window.close()
    assert all(gone_within(pid, 3) for pid in workers)
    assert not compile_workers()


def test_opening_another_program_ends_the_compile(make_window, qtbot, drop_axis, wait_idle):
    window = make_window("example:mlp")
    drop_axis(window, window.session.graph.value_by_name("x").id, 1, "model")
    qtbot.waitUntil(lambda: bool(compile_workers()), timeout=30_000)
    workers = compile_workers()
    fired = watch_compiled(window)
    window.open_program("example:conflict")
    qtbot.waitUntil(lambda: window.session.program.name == "conflict", timeout=60_000)
    assert all(gone_within(pid, 3) for pid in workers)
    result = wait_compiled(qtbot, window, fired)
    assert kinds(result.compiled_collectives) == jax_compiles(window)


def test_a_long_compile_says_its_estimate_and_stops_early_at_the_users_word(
    make_window, qtbot, monkeypatch
):
    from shardscope.backend.run import early_stop
    from shardscope.viewers.debugger.collective_lines import MEMORY_MISSING

    # every compile counts as long: this one takes a few seconds
    monkeypatch.setattr(early_stop, "OFFER_S", 0.0)
    window = make_window("example:transformer?layers=8")
    compiler: WindowCompiler = window.propagation.compiler
    fired = watch_compiled(window)
    qtbot.waitUntil(lambda: compiler.stop_button.isVisible(), timeout=90_000)
    said = compiler.indicator.label.text()
    assert said.startswith("compiling for 8 devices: ") and " s of about " in said
    assert "an estimate from the module's size, 0.5 MB" in said
    workers = compile_workers()
    qtbot.mouseClick(compiler.stop_button, Qt.MouseButton.LeftButton)
    assert not compiler.stop_button.isVisible()
    assert compiler.indicator.label.text().startswith(
        "stopping once XLA has partitioned the module: "
    )
    result = wait_compiled(qtbot, window, fired)
    assert result.compiled.early_stopped and result.compile_error is None
    assert result.memory is None and result.compiled_collectives
    assert kinds(result.compiled_collectives) == jax_compiles(window)
    assert window.statusBar().currentMessage().endswith("(stopped early: no memory)")
    assert window.collectives.memory.text() == MEMORY_MISSING
    assert not compiler.indicator.showing and not compiler.stop_button.isVisible()
    # the stopped compile's worker is gone (the spare one for the next edit stays)
    assert workers and all(gone_within(pid, 10) for pid in workers)


def test_a_short_compile_offers_no_early_stop(make_window, qtbot):
    window = make_window("example:mlp")
    compiler: WindowCompiler = window.propagation.compiler
    fired = watch_compiled(window)
    wait_compiled(qtbot, window, fired)
    assert not compiler.stop_early() and not compiler.stop_button.isVisible()
    assert window.session.analysis.memory is not None
