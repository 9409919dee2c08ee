"""Propagation > Run on devices: the program runs in a worker on fake CPU devices and the Run
dock shows each device's shard and the compiled collectives; failures leave the session as
it was."""

import re
import time
from pathlib import Path

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.run.panel import HINT, STALE

HOSTILE = Path(__file__).resolve().parents[2] / "inputs" / "hostile"
RUN = ("&Propagation", "&Run on devices")


def state_of(window) -> tuple:
    """What a failed run must leave alone: specs, mesh, undo stack, title."""
    session = window.session
    return (
        dict(session.specs),
        session.mesh,
        window.qundo.count(),
        window.qundo.index(),
        window.windowTitle(),
    )


def test_running_mlp_shows_every_device_shard_and_collective(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp")
    wait_idle(window)
    panel = window.run.panel
    assert panel.status.text() == HINT
    pick(window, *RUN)
    assert window.statusBar().currentMessage().startswith("Running mlp on 8 devices")
    assert window.docks["dock_run"].isVisible()
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    assert "CPU, 8 devices" in panel.summary.text()
    assert re.search(r"compile \d+\.\d+ s · run \d+\.\d+ ms", panel.summary.text())

    rows = {r[0]: r for r in panel.rows(panel.tensor_table)}
    name, shape, spec, error, replicas = rows["result[0]"]
    assert shape == "float32[32, 16]" and spec == "[data,_]"
    assert float(error) < 1e-4 and replicas == "yes"
    assert "x" in rows

    panel.select_tensor("result[0]")
    shards = panel.rows(panel.shard_table)
    assert [int(s[0]) for s in shards] == list(range(8))
    # data=4 splits the rows in four; the two model devices of a row hold the same piece
    assert [s[1] for s in shards[:4]] == ["[0:8, 0:16]", "[0:8, 0:16]", "[8:16, 0:16]"] + [
        "[8:16, 0:16]"
    ]
    assert shards[0][3] == shards[1][3] != shards[2][3]

    collectives = panel.rows(panel.collective_table)
    assert collectives, "the compiled mlp has a collective"
    assert all(r[5] for r in collectives)  # matched with a prediction, or "unmatched"
    panel.collective_table.selectRow(0)
    index = panel.collective_table.item(0, 0).data(0x0100)
    groups = window.run.panel.result.collectives[index].device_groups
    assert groups
    assert window.mesh_editor.grid.groups == [tuple(g) for g in groups]
    assert "outlined on the mesh" in panel.groups.text()


def test_a_second_run_while_one_runs_is_refused(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    pick(window, *RUN)
    assert any("already in progress" in m for m in window.messages.messages("warning"))
    qtbot.waitUntil(lambda: not window.run.running, timeout=120_000)
    wait_idle(window)
    assert window.run.count == 1


def test_a_program_that_raises_at_run_time_leaves_the_session_alone(make_window, qtbot, pick):
    window = make_window(str(HOSTILE / "run_raises.py"))
    before = state_of(window)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.failures == 1, timeout=120_000)
    errors = window.messages.messages("error")
    assert len(errors) == 1 and "run failed" in errors[0]
    assert "\n" not in errors[0]
    assert state_of(window) == before
    assert window.run.panel.result is None
    assert window.run.panel.status.text().startswith("The run failed")
    assert not window.run.running


def test_a_mesh_larger_than_the_devices_is_refused(make_window, qtbot, pick, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_RUN_CPU_DEVICES", "4")
    window = make_window("example:mlp", propagate=False)
    before = state_of(window)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.failures == 1, timeout=60_000)
    (error,) = window.messages.messages("error")
    assert "needs 8 devices but 4 CPU devices can be attached" in error
    assert state_of(window) == before


def test_an_edit_marks_the_run_stale_until_the_next_run(make_window, qtbot, pick, wait_idle):
    window = make_window("example:mlp", propagate=False)
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 1, timeout=120_000)
    panel = window.run.panel
    assert panel.status.text() != STALE
    window.mesh_editor.meshEdited.emit(parse_mesh("data=2,model=2"))
    assert panel.status.text() == STALE
    assert panel.result is not None  # the old result stays shown, marked
    pick(window, *RUN)
    qtbot.waitUntil(lambda: window.run.count == 2, timeout=120_000)
    assert panel.status.text() != STALE
    assert "4 devices" in panel.summary.text()
    window.qundo.undo()  # Edit > Undo
    assert panel.status.text() == STALE


def test_closing_during_a_run_ends_the_worker_at_once(make_window, qtbot, pick):
    window = make_window(str(HOSTILE / "run_hangs.py"), propagate=False)
    pick(window, *RUN)
    qtbot.wait(2000)  # the worker is compiling or hanging in the program
    assert window.run.running
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(0)
