"""When propagation runs: right after each edit while automatic, on F5 or the menu,
never with a stale result, with its failures in the messages dock; the final shardings
show before the whole result, through a child that ends with its program."""

import os
import signal

from PySide6.QtCore import Qt

import shardscope.app.window.propagation as scheduling
from shardscope.app.window.settings import Settings
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.spec import Spec
from tests.support.processes import gone_within


def test_an_edit_propagates_at_once_and_a_newer_one_supersedes_it(
    make_window, qtbot, drop_axis, wait_idle
):
    window = make_window("example:mlp")
    wait_idle(window)
    before = window.propagation.count
    applied = []
    window.session.events.propagation.connect(lambda r: r is not None and applied.append(r))
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert window.runner.busy == 1 and not window.propagation.pending
    drop_axis(window, x, 0, None)  # while the first still propagates
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    assert window.propagation.count == before + 1 and len(applied) == 1
    assert window.session.spec(x) == Spec.of(None, "model")
    assert window.session.propagation is applied[0]


def test_edits_of_one_turn_propagate_once(make_window, qtbot, wait_idle):
    window = make_window("example:mlp")
    wait_idle(window)
    before = window.propagation.count
    session = window.session
    x = session.graph.value_by_name("x").id
    session.set_spec(x, Spec.of(None, "model"))
    session.set_spec(x, Spec.of("data", "model"))
    assert window.propagation.pending and window.runner.busy == 0
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    assert window.propagation.count == before + 1


def test_without_automatic_an_edit_waits_for_f5(make_window, qtbot, drop_axis, wait_idle):
    window = make_window("example:mlp", propagate=False)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert not window.propagation.pending
    qtbot.wait(300)
    assert window.propagation.count == 0 and window.session.propagation is None
    qtbot.keyClick(window.graph, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: window.propagation.count == 1, timeout=60_000)
    assert window.session.propagation is not None
    assert window.statusBar().currentMessage().startswith("propagated in")
    wait_idle(window)


def test_propagate_now_from_the_menu(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp", propagate=False)
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: window.propagation.count == 1, timeout=60_000)
    wait_idle(window)


def test_the_automatic_switch_is_remembered(make_window, qtbot, pick, find_action, wait_idle):
    window = make_window("example:mlp", propagate=None)
    qtbot.waitUntil(lambda: window.propagation.count > 0, timeout=60_000)
    assert find_action(window, "&Propagation", "&Automatic after each edit").isChecked()
    pick(window, "&Propagation", "&Automatic after each edit")
    assert window.propagation.auto is False
    assert Settings().auto_propagate() is False
    wait_idle(window)

    again = make_window(None, propagate=None)
    assert again.propagation.auto is False
    assert not find_action(again, "&Propagation", "&Automatic after each edit").isChecked()
    pick(again, "&Propagation", "&Automatic after each edit")
    assert again.propagation.auto is True and Settings().auto_propagate() is True


def test_turning_automatic_on_propagates_the_open_program(make_window, qtbot, pick):
    window = make_window("example:mlp", propagate=False)
    pick(window, "&Propagation", "&Automatic after each edit")
    assert window.propagation.pending
    qtbot.waitUntil(lambda: window.propagation.count == 1, timeout=60_000)


def test_a_result_overtaken_by_a_newer_run_is_dropped(make_window, qtbot, wait_idle):
    window = make_window("example:mlp", propagate=False)
    applied = []
    window.session.events.propagation.connect(applied.append)
    window.propagation.propagate_now()
    window.propagation.propagate_now()
    wait_idle(window, timeout=60)
    assert window.propagation.count == 1
    assert len([r for r in applied if r is not None]) == 1


def test_nothing_to_propagate_without_a_program(make_window, pick):
    window = make_window(None, propagate=False)
    pick(window, "&Propagation", "&Propagate now")
    assert window.runner.busy == 0 and window.propagation.count == 0


def test_a_failed_propagation_is_reported(make_window, qtbot, monkeypatch, pick):
    window = make_window("example:mlp", propagate=False)

    def failing(program, mesh, specs, **_kwargs):
        def run():
            raise ShardscopeError("the engine gave up")

        return run

    monkeypatch.setattr(scheduling, "propagate_task", failing)
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: bool(window.messages.messages("error")), timeout=60_000)
    assert window.messages.messages("error") == ["propagation failed: the engine gave up"]
    assert window.propagation.count == 0 and window.session.propagation is None


def badges(window) -> dict:
    return {b.value_ids[0]: window.graph.badge_text(b.value_ids[0]) for b in window.graph.badges}


def test_an_edit_shows_its_final_shardings_before_the_whole_result(
    make_window, qtbot, drop_axis, wait_idle
):
    window = make_window("example:conflict")
    wait_idle(window)
    before = window.propagation.count
    first = []
    window.session.events.final_specs.connect(
        lambda: first.append((window.session.propagation, badges(window)))
    )
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    (shown,) = first
    # Shown while the session still waited for the result, and what the result shows.
    assert shown[0] is None
    assert window.session.propagation is not None
    assert shown[1] == badges(window)
    assert "?" not in "".join(shown[1].values())


def test_a_dead_propagation_child_is_replaced_without_a_word(
    make_window, qtbot, drop_axis, wait_idle
):
    window = make_window("example:mlp")
    wait_idle(window)
    pid = window.propagation.server.pid
    os.kill(pid, signal.SIGKILL)
    assert gone_within(pid, 5)
    before = window.propagation.count
    drop_axis(window, window.session.graph.value_by_name("x").id, 1, "model")
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    assert window.messages.messages("error") == []
    assert window.session.propagation is not None
    # The crashed request went the forked way; the next one starts a new child.
    drop_axis(window, window.session.graph.value_by_name("x").id, 1, None)
    qtbot.waitUntil(lambda: window.propagation.count > before + 1, timeout=60_000)
    wait_idle(window)
    assert window.propagation.server.pid not in (None, pid)


def test_the_propagation_child_ends_with_its_program_and_its_window(make_window, wait_idle):
    window = make_window("example:mlp")
    wait_idle(window)
    first = window.propagation.server.pid
    window.open_program("example:conflict")
    wait_idle(window, timeout=60)
    assert gone_within(first, 5)
    second = window.propagation.server.pid
    assert second not in (None, first)
    window.close()
    assert gone_within(second, 5)
