"""The analysis laid over the hosts and priced in the window: another hardware reprices
the Collectives dock and is remembered, hosts mark the collectives that cross them and
their warnings are said once, a compile error is one line, and closing the window leaves
nothing listening to the session."""

import dataclasses

from PySide6.QtCore import Qt

from shardscope.backend.cost.hardware import DEFAULT_PROFILE
from shardscope.backend.run.result import NotCompiled
from tests.support.debugger_window import compiled_in


def test_other_hardware_reprices_the_dock_and_is_remembered(make_window, qtbot):
    window = make_window("example:mlp")
    compiled_in(qtbot, window)
    view = window.collectives
    box = view.hardware
    assert box.currentData() == DEFAULT_PROFILE
    before = view.column("Est. time")
    assert all(t != "—" for t in before)
    line = view.meaning.text()
    box.setCurrentIndex(box.findData("h100"))
    assert view.column("Est. time") != before
    assert "NVIDIA H100" in view.meaning.text() and view.meaning.text() != line
    assert window.settings.hardware("?") == "h100"
    assert window.session.analysis.pricing.hardware == "h100"


def test_hosts_mark_the_collectives_that_cross_and_say_the_host_warnings_once(make_window, qtbot):
    window = make_window("example:mlp")
    compiled_in(qtbot, window)
    view, editor = window.collectives, window.mesh_editor
    assert "Hosts" not in [
        view.compiled_table.horizontalHeaderItem(c).text()
        for c in range(view.compiled_table.columnCount())
        if not view.compiled_table.isColumnHidden(c)
    ]
    # 2 hosts in blocks of the device order: the all-reduce over model stays on a host,
    # and the dock follows at once, without propagating again
    count = window.propagation.count
    editor.hosts_spin.setValue(2)
    assert view.column("Hosts") == ["within"] and window.propagation.count == count
    assert view.traffic.text().startswith("On 2 hosts: 0 of 1 compiled collectives cross")
    # model across hosts: the new order propagates and compiles again; now it crosses
    editor.factor_spin(1).setValue(2)
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    result = compiled_in(qtbot, window)
    hosts = window.session.mesh_hosts()
    (c,) = result.compiled_collectives
    assert all(hosts.of_device(a) != hosts.of_device(b) for a, b in c.device_groups)
    assert view.column("Hosts") == ["crosses"]
    assert view.column("Across hosts") != ["0 B"]
    warned = [m for m in window.messages.messages("warning") if "crosses hosts" in m]
    assert len(warned) == 1
    # 4 hosts along data keep every model pair on one host
    assert warned[0].startswith("all-reduce over model (line 14")
    assert "--dcn data=4" in warned[0] and "keeps it within each host" in warned[0]
    view.hardware.setCurrentIndex(view.hardware.findData("h100"))  # repriced, said once
    assert [m for m in window.messages.messages("warning") if "crosses hosts" in m] == warned
    # the one collective crosses hosts: no traffic is claimed for NVLink, the fast link
    line = view.traffic.text()
    assert line.startswith("On 4 hosts: 1 of 1 compiled collectives cross hosts")
    assert line.endswith("none stays within hosts") and "NVLink" not in line


def test_the_prediction_tab_flags_each_row_and_a_compile_error_is_one_line(make_window, qtbot):
    window = make_window("example:mlp")
    view = window.collectives
    result = compiled_in(qtbot, window)
    bar = view.tabs
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())
    assert not view.showing_compiled
    assert view.column("Compiled") == [
        "matched" if m else "not compiled" for m in result.predicted_matched
    ]
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(0).center())
    assert view.showing_compiled
    # A compile that failed: one line, and the prediction labelled as such.
    failed = dataclasses.replace(result.propagation)
    window.session.set_propagation(failed)
    window.session.set_compiled(failed, NotCompiled("boom: no"))
    assert view.status.text() == "The XLA compile failed: boom: no"
    assert "Shardy's prediction (before compiling) — the compile failed" in view.header.text()
    assert not view.showing_compiled


def test_closing_the_window_leaves_nothing_listening_to_the_session(make_window):
    window = make_window("example:conflict")
    ev = window.session.events
    followed = (ev.propagation, ev.compiled, ev.priced, ev.hosts)
    assert all(len(signal) > 0 for signal in followed)
    window.close()
    # the docks, the pricing, the comparison and the revealing of rows all let go
    assert [len(signal) for signal in followed] == [0, 0, 0, 0]
