"""The GSPMD comparison in the window: the toggle marks what GSPMD shards otherwise, a
failing or hanging worker is reported or ended on quit, before a propagation the docks
say how to start, and a torch_xla capture's docks, panes and legend say whose each side
is."""

import dataclasses
import time

from PySide6.QtCore import Qt

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.gspmd.compare import GspmdComparison
from shardscope.viewers.graph.markers import (
    CollectiveMarkItem,
    ConflictMarkItem,
    GspmdMarkItem,
)
from tests.support.debugger_window import add_result, marks, node_item
from tests.support.file_menu import answer_open
from tests.support.inputs import INPUTS, write_input


def test_the_gspmd_toggle_marks_the_adds_result(make_window, qtbot, pick, find_action):
    window = make_window("example:conflict")
    gspmd = window.gspmd.view
    assert gspmd.state == "off"
    pick(window, "&View", "Compare with &GSPMD")
    assert find_action(window, "&View", "Compare with &GSPMD").isChecked()
    assert not window.docks["dock_gspmd"].visibleRegion().isEmpty()
    qtbot.waitUntil(lambda: gspmd.state != "running", timeout=120_000)
    assert gspmd.state == "done", gspmd.status.text()
    out = add_result(window)
    assert window.markers.gspmd_values() == {out}
    (badge,) = window.graph.graph_scene.badges_of(out)
    (mark,) = marks(badge, GspmdMarkItem)
    assert (mark.shardy, mark.gspmd) == ("[_, _]", "[data, _]")
    assert gspmd.row_texts()[0][:3] == ["result[0]", "[_, _]", "[data, _]"]
    # GSPMD's compiled collectives per kind, beside Shardy's.
    counts = gspmd.count_texts()
    assert counts and all(row[2].isdigit() for row in counts), counts
    specs = dict(window.session.specs)
    pick(window, "&View", "Compare with &GSPMD")
    assert gspmd.state == "off" and not marks(badge, GspmdMarkItem)
    assert dict(window.session.specs) == specs


def test_a_failing_gspmd_worker_is_reported_and_leaves_the_session(
    make_window, qtbot, pick, monkeypatch
):
    def crash(program, result, **kwargs):
        raise ShardscopeError("the GSPMD compile crashed (signal 11): see its log")

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", crash)
    window = make_window("example:conflict")
    result, specs = window.session.propagation, dict(window.session.specs)
    pick(window, "&View", "Compare with &GSPMD")
    gspmd = window.gspmd.view
    qtbot.waitUntil(lambda: gspmd.state == "failed", timeout=30_000)
    assert gspmd.status.text() == (
        "The GSPMD comparison failed: the GSPMD compile crashed (signal 11): see its log"
    )
    assert any("GSPMD comparison failed" in m for m in window.messages.messages("error"))
    assert window.markers.gspmd_values() == set()
    assert window.session.propagation is result and dict(window.session.specs) == specs
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_before_propagation_the_docks_say_how_to_start(make_window, qtbot, pick, monkeypatch):
    compared = []

    def agree(program, result, **kwargs):
        compared.append(result)
        return GspmdComparison([], [])

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", agree)
    window = make_window("example:conflict", propagate=False)
    assert window.conflicts.status.text().startswith("No propagation yet: propagate (F5)")
    assert window.collectives.status.text().startswith("No propagation yet")
    assert not marks(node_item(window, "add"), ConflictMarkItem)
    pick(window, "&View", "Compare with &GSPMD")
    assert window.gspmd.view.state == "waiting" and compared == []
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: window.gspmd.view.state == "done", timeout=60_000)
    assert compared == [window.session.propagation]
    assert window.gspmd.view.status.text() == "GSPMD and Shardy agree on every value."
    assert marks(node_item(window, "add"), ConflictMarkItem)


def test_quitting_during_a_gspmd_compile_ends_its_worker(make_window, qtbot, tmp_path, monkeypatch):
    # The comparison's worker runs the program again; this one hangs there.
    from shardscope.backend.gspmd.compare import run_gspmd

    started = tmp_path / "started"
    path = write_input(
        tmp_path,
        "hangs.py",
        f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('x')\ntime.sleep(600)\n",
    )

    def hang(program, result, **kwargs):
        stand_in = dataclasses.replace(program, kind="python", path=path, source=path)
        return run_gspmd(stand_in, result.mesh.shape, {})

    monkeypatch.setattr("shardscope.app.window.gspmd_compare.compare_gspmd", hang)
    window = make_window("example:conflict")
    window.gspmd.set_on(True)
    qtbot.waitUntil(started.exists, timeout=60_000)
    assert window.gspmd.comparing
    begin = time.monotonic()
    window.close()
    assert time.monotonic() - begin < 5
    assert window.runner.wait(5_000)


def marks_in(view, kind) -> list:
    return [i for i in view.graph_scene.items() if isinstance(i, kind)]


def _headers(table) -> list[str]:
    return [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]


def test_a_torch_xla_capture_names_whose_each_side_is(
    make_window, qtbot, monkeypatch, pick, find_action
):
    window = make_window(None)
    answer_open(monkeypatch, INPUTS / "torch" / "capture_conflict.json")
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    # The panes open on GSPMD's shardings beside Shardy's, and their pickers say whose.
    panes, view = window.panes, window.gspmd.view
    assert panes.modes == ("gspmd", "shardy")
    assert panes.left.header.combo.currentText() == "GSPMD (torch_xla)"
    assert panes.right.header.combo.currentText() == "Shardy (shardscope)"
    assert window.docks["dock_gspmd"].windowTitle() == "GSPMD (torch_xla) vs Shardy (shardscope)"
    # The panes show the comparison: the dock never says it is off.
    assert view.state != "off" and not view.status.text().startswith("Off")
    qtbot.waitUntil(lambda: view.state == "done", timeout=120_000)
    qtbot.waitUntil(lambda: window.collectives.compiled is not None, timeout=60_000)
    assert _headers(view.table)[1:3] == [
        "Shardy (shardscope's comparison)",
        "GSPMD (torch_xla's partitioner)",
    ]
    # torch_xla's own compile (one collective-permute) beside shardscope's GSPMD recompile
    assert _headers(view.counts) == [
        "Compiled",
        "torch_xla\n(GSPMD)",
        "GSPMD\n(shardscope's recompile)",
    ]
    assert [row[:2] for row in view.count_texts()] == [["collective-permute", "1"]]
    # Each pane tags its partitioner's collectives: GSPMD's pane those of the recompile
    # whose shardings it shows, Shardy's pane Shardy's prediction (the compiled ones are
    # torch_xla's own, with GSPMD).
    gspmd_tags = marks_in(panes.left.view, CollectiveMarkItem)
    assert gspmd_tags and all(t.compiled for t in gspmd_tags)
    recompiled = {id(c) for c in window.gspmd.comparison.collectives}
    assert {id(c) for t in gspmd_tags for c in t.collectives} <= recompiled
    shardy_tags = marks_in(panes.right.view, CollectiveMarkItem)
    predicted = {id(c) for c in window.session.propagation.collectives}
    assert shardy_tags and not any(t.compiled for t in shardy_tags)
    assert {id(c) for t in shardy_tags for c in t.collectives} <= predicted
    assert panes.right.header.toolTip() == (
        "Collective tags here are Shardy's prediction: the compiled collectives are "
        "torch_xla's own compile, with GSPMD, tagged in a pane showing now."
    )
    assert "shardscope's recompile of torch_xla's module" in panes.left.header.toolTip()
    assert view.status.text() == (
        "GSPMD (torch_xla's partitioner) shards 1 value differently from Shardy "
        "(shardscope's comparison) (marked in both side-by-side panes)."
    )
    tabs = window.collectives.tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == [
        "Compiled (torch_xla, GSPMD)",
        "Shardy's prediction (shardscope)",
    ]
    # The toggle reuses what the panes compared. While a pane shows GSPMD's shardings
    # the panes' own marks say what differs (the toggle's are not drawn over them); the
    # single graph marks it once side by side is off.
    pick(window, "&View", "Compare with &GSPMD")
    assert not window.gspmd.comparing and view.state == "done"
    assert view.status.text().endswith("(marked in both side-by-side panes).")
    assert window.markers.gspmd_values() == set()
    pick(window, "&View", "Side by si&de")
    assert not panes.on and view.status.text().endswith("(marked in purple on the graph).")
    assert window.markers.gspmd_values() == {add_result(window)}
    pick(window, "&View", "Side by si&de")
    assert "gspmd" in panes.modes and window.markers.gspmd_values() == set()
    pick(window, "&View", "Compare with &GSPMD")
    assert not find_action(window, "&View", "Compare with &GSPMD").isChecked()
    assert view.state == "done" and window.markers.gspmd_values() == set()
    assert view.status.text().endswith("(marked in both side-by-side panes).")
    qtbot.mouseClick(window.legend_button, Qt.MouseButton.LeftButton)
    legend = window.legend_button.dialog
    qtbot.addWidget(legend)
    assert any(
        e.startswith("GSPMD (torch_xla's partitioner) shards it differently")
        for e in legend.legend.entries
    )
    # A JAX program reads plain Shardy and GSPMD again.
    count = window.propagation.count
    window.open_program("example:conflict")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    assert window.docks["dock_gspmd"].windowTitle() == "GSPMD vs Shardy"
    assert _headers(view.table)[1:3] == ["Shardy", "GSPMD"]
    assert [tabs.tabText(i) for i in range(tabs.count())] == [
        "Compiled (XLA)",
        "Shardy's prediction",
    ]
    if panes.on:
        assert panes.left.header.mode_texts()[2:] == ["Shardy", "GSPMD"]


def test_the_dock_says_off_only_when_neither_the_toggle_nor_a_pane_shows_gspmd(
    make_window, qtbot, pick, find_action
):
    window = make_window("example:conflict")
    view, panes = window.gspmd.view, window.panes

    def agrees() -> None:
        wanted = find_action(window, "&View", "Compare with &GSPMD").isChecked() or (
            panes.on and "gspmd" in panes.modes
        )
        qtbot.waitUntil(lambda: view.state in ("off", "done"), timeout=120_000)
        assert (view.state == "off") == (not wanted), (panes.modes, view.status.text())
        assert view.status.text().startswith("Off") == (not wanted)

    pick(window, "&View", "Side by si&de")
    assert panes.modes == ("shardy", "gspmd")
    agrees()
    panes.right.header.combo.setCurrentIndex(panes.right.header.combo.findData("now"))
    agrees()
    panes.left.header.combo.setCurrentIndex(panes.left.header.combo.findData("gspmd"))
    agrees()
    pick(window, "&View", "Compare with &GSPMD")
    agrees()
    pick(window, "&View", "Side by si&de")
    agrees()
    pick(window, "&View", "Compare with &GSPMD")
    agrees()
    pick(window, "&View", "Side by si&de")
    agrees()
    count = window.propagation.count
    pick(window, "&Propagation", "&Propagate now")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    agrees()
    pick(window, "&View", "Compare with &GSPMD")
    pick(window, "&View", "Compare with &GSPMD")
    agrees()
    pick(window, "&View", "Side by si&de")
    agrees()
