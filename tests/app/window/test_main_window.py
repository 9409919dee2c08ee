"""The main window on example:mlp: title, scopes, tensors, drops, undo, selection, theme."""

import time

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QDragMoveEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMessageBox, QToolTip, QWidget

from shardscope.app.window import saving
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec
from shardscope.viewers.common.mime import axis_mime_data
from shardscope.viewers.graph.markers import GspmdMarkItem
from shardscope.viewers.graph.view import MIN_FIT_SCALE, SMALL_FRAME_NODES
from tests.support import qt_events
from tests.support.debugger_window import compiled_in
from tests.support.inputs import INPUTS, write_input
from tests.support.paints import PaintLog, fresh, on_screen, region_area, wait_painted


def test_opens_with_title_scopes_and_tensors(make_window):
    window = make_window("example:mlp")
    assert window.windowTitle().startswith("mlp")
    view = window.graph
    layout = view.layout_
    scopes = {n.scope for n in layout.nodes if n.kind == "op"}
    assert {"layer1", "layer2"} <= scopes
    assert {b.path for b in layout.boxes} == {"layer1", "layer2"}
    inputs = {n.label for n in layout.nodes if n.kind == "input"}
    assert inputs == {"x", "params['w1']", "params['w2']", "params['b1']", "params['b2']"}
    x = window.session.graph.value_by_name("x").id
    assert view.badge_text(x) == "[data, _]"
    # Folding gives one node per scope with its op count.
    view.collapse_all()
    folded = {n.label: n.count for n in view.layout_.nodes if n.kind == "scope"}
    assert folded == {"layer1": 5, "layer2": 4}
    assert {d.objectName() for d in window.findChildren(QDockWidget)} >= {
        "dock_mesh",
        "dock_palette",
        "dock_tensor",
        "dock_source",
        "dock_messages",
        "dock_history",
    }


def test_drop_axis_on_badge_is_undoable(make_window, qtbot, wait_idle, drop_axis):
    window = make_window("example:mlp")
    session = window.session
    x = session.graph.value_by_name("x").id
    before = window.propagation.count
    drop_axis(window, x, 1, "model")
    assert session.spec(x) == Spec.of("data", "model")
    assert window.graph.badge_text(x) == "[data, model]"
    assert window.qundo.count() == 1 and "model" in window.qundo.text(0)
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    assert session.propagation is not None
    window.menu_actions["undo"].trigger()
    assert session.spec(x) == Spec.of("data", None)
    assert window.graph.badge_text(x) == "[data, _]"
    window.menu_actions["redo"].trigger()
    assert session.spec(x) == Spec.of("data", "model")
    window.menu_actions["undo"].trigger()
    wait_idle(window)

    # "data" already splits dim 0 of x: the drop is refused and nothing changes.
    specs = dict(session.specs)
    drop_axis(window, x, 1, "data")
    assert dict(session.specs) == specs
    assert window.qundo.count() == 1 and window.qundo.index() == 0
    assert any("already shards dim 0" in m for m in window.messages.messages("error"))

    # Dropping "replicated" clears a dim.
    drop_axis(window, x, 0, None)
    assert session.spec(x) == Spec.of(None, None)
    wait_idle(window)


def test_a_drop_on_a_tensor_without_spec_keeps_its_other_dims_open(
    make_window, qtbot, wait_idle, drop_axis
):
    # %0 = x @ w1 has no spec of the user's; propagation gives it [data, model].
    window = make_window("example:mlp")
    session = window.session
    wait_idle(window)
    h = next(v.id for v in session.graph.values if v.display_name == "layer1/dot_general %0")
    out = session.graph.value_by_name("result[0]").id
    assert session.spec_text(h) == "[data, model]"
    before = window.propagation.count
    drop_axis(window, h, 1, "model")
    assert session.spec(h) == Spec((DimSpec(is_open=True), DimSpec(("model",))))
    assert window.qundo.text(0) == ("layer1/dot_general %0: no spec -> [?, model] (dim 1 = model)")
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    # dim 0 keeps its data parallelism, here and downstream
    assert session.propagation.value(h).spec[0] == ["data"]
    assert session.spec_text(out) == "[data, _]"


def _undo_action(window):
    for top in window.menuBar().actions():
        for action in top.menu().actions() if top.menu() else ():
            if action.text().startswith("&Undo"):
                return action
    raise AssertionError("no Undo in the menus")


def test_a_badge_drop_replaces_shift_appends_and_history_says_which(
    make_window, wait_idle, drop_axis
):
    window = make_window("example:mlp")
    session = window.session
    x = session.graph.value_by_name("x").id
    assert session.spec(x) == Spec.of("data", None)
    event, _ = drop_axis(window, x, 0, "model")
    assert event.isAccepted()
    assert session.spec(x) == Spec.of("model", None)
    replaced = "replace x dim 0: data → model ([data, _] → [model, _])"
    assert window.qundo.text(0) == replaced
    assert window.statusBar().currentMessage() == replaced
    _undo_action(window).trigger()
    assert session.spec(x) == Spec.of("data", None)
    # dragging over the badge's dim says what the drop will do
    view = window.graph
    pos = view.mapFromScene(view.badge_for(x).chip_scene_center(0))
    mime = axis_mime_data("model")
    for held, hint in (
        (Qt.KeyboardModifier.NoModifier, "replace data → model (Shift: append)"),
        (Qt.KeyboardModifier.ShiftModifier, "append model → data+model"),
    ):
        move = QDragMoveEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, held)
        view.dragMoveEvent(move)
        assert move.isAccepted() and QToolTip.text() == hint
    drop_axis(window, x, 0, "model", Qt.KeyboardModifier.ShiftModifier)
    assert session.spec(x) == Spec.of(("data", "model"), None)
    assert window.qundo.text(0) == (
        "append model to x dim 0: data → data+model, a tuple of axes ([data, _] → [data+model, _])"
    )
    assert window.qundo.count() == 1  # the undone replace is gone, the append replaced it
    _undo_action(window).trigger()
    assert session.spec(x) == Spec.of("data", None)
    # the axis the dim already holds: nothing to replace, one line says what to do
    drop_axis(window, x, 0, "data")
    assert session.spec(x) == Spec.of("data", None)
    assert "hold Shift while dropping to add one" in window.messages.messages("error")[-1]
    wait_idle(window)


def test_an_inspector_drop_replaces_and_ctrl_appends(make_window, wait_idle):
    window = make_window("example:mlp")
    session = window.session
    x = session.graph.value_by_name("x").id
    window.select_value(x)
    slot = window.inspector.slots[0]
    assert "Shift or Ctrl" in slot.toolTip()
    mime = axis_mime_data("model")
    qt_events.drop(slot, QPointF(5, 5), mime)
    assert session.spec(x) == Spec.of("model", None)
    assert window.qundo.text(window.qundo.count() - 1).startswith("replace x dim 0: data → model")
    assert [a for a, _ in window.inspector.slots[0]._chips()] == ["model"]
    qt_events.drop(slot, QPointF(5, 5), axis_mime_data("data"), Qt.KeyboardModifier.ControlModifier)
    assert session.spec(x) == Spec.of(("model", "data"), None)
    assert window.qundo.text(window.qundo.count() - 1).startswith(
        "append data to x dim 0: model → model+data"
    )
    assert [a for a, _ in window.inspector.slots[0]._chips()] == ["model", "data"]
    _undo_action(window).trigger()
    _undo_action(window).trigger()
    assert session.spec(x) == Spec.of("data", None)
    assert [a for a, _ in window.inspector.slots[0]._chips()] == ["data"]
    wait_idle(window)


def test_a_mesh_preset_keeps_fitting_specs_and_flags_the_others(make_window, wait_idle):
    window = make_window("example:mlp")
    session = window.session
    wait_idle(window)
    specs, mesh = dict(session.specs), session.mesh
    combo = window.mesh_editor.preset_combo
    combo.activated.emit(combo.findText("2-D data=2,model=4"))
    assert session.mesh.describe() == "data=2,model=4"
    assert dict(session.specs) == specs
    assert window.messages.messages("warning") == []
    combo.activated.emit(combo.findText("TPU 2x4 (v5e-8)"))
    assert session.mesh.axis_names == ("x", "y")
    (warning,) = window.messages.messages("warning")
    assert warning.startswith("mesh x=2,y=4 has no axes ")
    for change in (
        "params['w1'] [_, model] -> [_, _]",
        "params['w2'] [model, _] -> [_, _]",
        "x [data, _] -> [_, _]",
    ):
        assert change in warning
    assert "Undo (Ctrl+Z)" in warning
    assert window.qundo.text(1) == "mesh x=2,y=4 (3 specs lost axes model, data)"
    window.menu_actions["undo"].trigger()
    assert session.mesh.describe() == "data=2,model=4" and dict(session.specs) == specs
    window.menu_actions["undo"].trigger()
    assert session.mesh == mesh and dict(session.specs) == specs
    wait_idle(window)


def test_tiles_show_what_propagation_decided_for_an_annotated_intermediate(
    make_window, qtbot, wait_idle
):
    # %0 = x @ w1 annotated [?, model]: propagation makes it [data, model], 8 tiles, as
    # `propagate example:mlp --spec 5=_?,model` reports
    window = make_window("example:mlp")
    session = window.session
    wait_idle(window)
    h = next(v.id for v in session.graph.values if v.display_name == "layer1/dot_general %0")
    window.outline.valueSelected.emit(h)
    inspector = window.inspector
    mime = axis_mime_data("model")
    before = window.propagation.count
    qt_events.drop(inspector.slot(1), QPointF(5, 5), mime)
    assert session.spec(h) == parse_spec("?,model")
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    wait_idle(window)
    assert session.propagation.value(h).spec == [["data"], ["model"]]
    assert inspector.tile_grid.summary.text() == "8 tiles"
    assert inspector.text_labels["jax"].text() == "P('data', 'model')"
    # the chips still show the user's annotation, open dim 0 included
    assert inspector.slot(0).spec == DimSpec(is_open=True)
    assert inspector.slot(1).spec == DimSpec(("model",))


def test_select_tensor_syncs_inspector_and_source(make_window):
    window = make_window("example:mlp", propagate=False)
    graph = window.session.graph
    add = next(op for op in graph.ops if op.name == "stablehlo.add")
    assert window.graph.select_value(add.results[0], center=True)
    assert window.selected_value == add.results[0]
    assert window.source_view.path and window.source_view.path.endswith("mlp.py")
    assert window.source_view.line == add.source_line
    assert window.source_view.header.text().startswith("mlp.py:")


def test_find_matches_a_call_by_its_callee(make_window, qtbot, pick):
    window = make_window("example:transformer", propagate=False)
    graph = window.session.graph
    call = next(op for op in graph.ops if op.callee == "log_softmax")
    pick(window, "&Edit", "&Find…")
    box = window.graph_panel.find_box
    qtbot.keyClicks(box, "call @log_softmax")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert window.graph_panel.find_status.text() == "2 ops"  # two call sites
    (selected,) = window.graph.scene().selectedItems()
    assert selected.node.op == call.id


PROGRAM = """import jax
import jax.numpy as jnp


def f(x):
    return jnp.tanh(x)


PROGRAM = f
EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 8), jnp.float32),)
"""


def test_a_new_program_shows_its_own_source_unmarked_and_clears_the_find_box(
    make_window, qtbot, tmp_path
):
    path = write_input(tmp_path, "model.py", PROGRAM)
    window = make_window(path, propagate=False)
    tanh = next(op for op in window.session.graph.ops if op.short_name == "tanh")
    window.select_op(tanh.id)
    assert "jnp.tanh(x)" in window.source_view.text.toPlainText()
    box = window.graph_panel.find_box
    qtbot.keyClicks(box, "nothing such")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert window.graph_panel.find_status.text() == "no match"

    write_input(tmp_path, "model.py", PROGRAM.replace("jnp.tanh(x)", "jnp.sin(x)"))
    program = window.session.program
    window.open_program(path)
    qtbot.waitUntil(lambda: window.session.program is not program, timeout=60_000)
    assert box.text() == "" and window.graph_panel.find_status.text() == ""
    # the new file where its ops begin, nothing marked: never the old program's text
    source = window.source_view
    qtbot.waitUntil(lambda: "jnp.sin(x)" in source.text.toPlainText())
    assert "tanh" not in source.text.toPlainText()
    assert source.line is None and source.text.extraSelections() == []
    sin = next(op for op in window.session.graph.ops if op.short_name == "sine")
    window.select_op(sin.id)
    assert "jnp.sin(x)" in window.source_view.text.toPlainText()
    assert "tanh" not in window.source_view.text.toPlainText()


def test_a_view_drawn_while_a_new_program_arrives_finds_the_program_dock_on_it(
    make_window, qtbot, monkeypatch
):
    window = make_window("example:attention", propagate=False)
    window.outline.tabs.setCurrentIndex(1)  # the Tensors table shows
    table = window.outline.table
    drawn = []
    update_title = window.files.update_title

    def draw_first():
        # as a view that draws itself while the change goes on (a quiet change grabs
        # the widgets it changes): the table is laid out and asked for its rows then
        drawn.append((table.model().rowCount(), table.grab().isNull()))
        update_title()

    monkeypatch.setattr(window.files, "update_title", draw_first)
    program = window.session.program
    window.open_program("example:mlp")
    qtbot.waitUntil(lambda: window.session.program is not program, timeout=60_000)
    graph = window.session.graph
    shown = window.outline.table_model.rows
    assert drawn and drawn[0][0] == len(shown) and not drawn[0][1]
    assert all(v < len(graph.values) for v in shown)


def fitted_scale(view) -> float:
    rect = view.sceneRect()
    port = view.viewport()
    whole = min(port.width() / rect.width(), port.height() / rect.height(), 1.25)
    # a small frame is fitted whole, below the legible zoom too
    return whole if len(view.layout_.nodes) <= SMALL_FRAME_NODES else max(MIN_FIT_SCALE, whole)


def test_a_small_graph_stays_fitted_when_the_window_grows_after_it_opened(
    make_window, qtbot, tmp_path
):
    # a window manager may size the window only after the program has loaded
    window = make_window(None, propagate=False)
    window.resize(700, 420)
    qtbot.wait(50)
    window.open_program(write_input(tmp_path, "model.py", PROGRAM))
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    view = window.graph
    small = view.transform().m11()
    assert small == pytest.approx(fitted_scale(view))
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: view.transform().m11() > small)
    assert view.transform().m11() == pytest.approx(fitted_scale(view))
    # once the user zooms, a resize leaves the zoom alone
    window.menu_actions["zoom_in"].trigger()
    zoomed = view.transform().m11()
    window.resize(1200, 800)
    qtbot.wait(50)
    assert view.transform().m11() == pytest.approx(zoomed)


def test_layout_and_theme_persist(make_window):
    window = make_window(None, propagate=False)
    window.toggle_theme()
    theme = window.theme
    window.close()
    again = make_window(None, propagate=False)
    assert again.theme == theme
    geometry, state = again.settings.window_state()
    assert geometry is not None and state is not None


def test_outline_lists_scopes_and_selects_tensors(make_window):
    window = make_window("example:mlp")
    assert window.outline.scope_rows() == {"layer1": 5, "layer2": 4}
    x = window.session.graph.value_by_name("x").id
    window.outline.valueSelected.emit(x)
    assert window.selected_value == x


def test_dimension_menu_sets_open_priority_and_clears(make_window):
    window = make_window("example:mlp", propagate=False)
    session = window.session
    x = session.graph.value_by_name("x").id
    menu = window.inspector.specMenuAction
    menu.emit(x, 0, "open", None)
    assert session.spec(x).dims[0].is_open
    menu.emit(x, 0, "closed", None)
    assert not session.spec(x).dims[0].is_open
    menu.emit(x, 0, "priority", 1)
    assert session.spec(x).dims[0].priority == 1
    menu.emit(x, 0, "clear", None)
    assert session.spec(x).dims[0].axes == ()
    window.qundo.undo()
    assert session.spec(x).dims[0].axes == ("data",)


def test_hovering_a_tile_outlines_its_devices_on_the_mesh(make_window):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    window.select_value(x)
    window.inspector.tile_grid.tileHovered.emit([2, 3])
    assert window.mesh_editor.grid._highlight == {2, 3}
    window.inspector.tile_grid.tileHovered.emit([])
    assert window.mesh_editor.grid._highlight == set()


def test_no_opengl_anywhere(make_window):
    """The app must stay usable over X11 forwarding: nothing may draw through OpenGL."""
    window = make_window("example:mlp", propagate=False)
    window.select_value(window.session.graph.value_by_name("x").id)
    window.grab()
    # pyqtgraph imports Qt's OpenGL bindings, but no widget may be an OpenGL surface
    assert not pg.getConfigOption("useOpenGL")
    gl = [w for w in QApplication.allWidgets() if w.inherits("QOpenGLWidget")]
    assert not gl, gl


def test_an_idle_window_does_not_repaint(make_window, qtbot, wait_idle):
    """Over X11 forwarding every repaint crosses the network: idle means no paint events."""

    class Count(QObject):
        paints = 0

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                Count.paints += 1
            return False

    window = make_window("example:mlp")
    wait_idle(window)
    # The busy bar moves while XLA compiles the propagation: idle is once it is done.
    qtbot.waitUntil(lambda: not window.propagation.compiler.compiling, timeout=60_000)
    qtbot.wait(300)
    counter = Count()
    widgets = [window, *window.findChildren(QWidget)]
    for widget in widgets:
        widget.installEventFilter(counter)
    qtbot.wait(1000)
    for widget in widgets:
        widget.removeEventFilter(counter)
    assert Count.paints == 0


def quit_answering(window, monkeypatch, pick, button):
    """File > Quit with the unsaved-edits prompt answering ``button``; the prompts shown."""
    monkeypatch.delenv("SHARDSCOPE_UNSAVED", raising=False)
    asked = []

    def ask(parent, title, text):
        asked.append(text)
        return button

    monkeypatch.setattr(saving, "ask_unsaved", ask)
    pick(window, "&File", "&Quit")
    return asked


def test_quit_with_unsaved_edits_asks_and_cancel_keeps_everything(
    make_window, monkeypatch, pick, drop_axis
):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    recovery = window.session.recovery_file
    saved = recovery.read_text()
    asked = quit_answering(window, monkeypatch, pick, QMessageBox.StandardButton.Cancel)
    assert asked == ["mlp has edits that are not saved. Save them before quitting?"]
    assert window.isVisible()
    assert recovery.read_text() == saved
    assert window.session.spec(x) == Spec.of("data", "model") and window.qundo.count() == 1

    asked = quit_answering(window, monkeypatch, pick, QMessageBox.StandardButton.Discard)
    assert len(asked) == 1 and not window.isVisible()
    assert not recovery.exists()


def test_quit_can_save_the_edits_first(make_window, tmp_path, monkeypatch, pick, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    path = tmp_path / "mlp.json"
    assert window.files.save_session_to(path)
    drop_axis(window, x, 1, "model")
    quit_answering(window, monkeypatch, pick, QMessageBox.StandardButton.Save)
    assert not window.isVisible()
    assert {"value": x, "name": "x", "spec": "data,model"} in Session.read(path)["specs"]


def test_quit_without_edits_asks_nothing(make_window, monkeypatch, pick):
    window = make_window("example:mlp", propagate=False)
    assert quit_answering(window, monkeypatch, pick, QMessageBox.StandardButton.Cancel) == []
    assert not window.isVisible()
    assert not window.session.recovery_file.exists()


def test_each_window_keeps_its_own_recovery_file(make_window, drop_axis):
    one = make_window("example:mlp", propagate=False)
    two = make_window("example:mlp", propagate=False)
    x = one.session.graph.value_by_name("x").id
    drop_axis(one, x, 1, "model")
    drop_axis(two, x, 0, None)
    assert one.session.recovery_file != two.session.recovery_file
    one.close()
    assert not one.session.recovery_file.exists()
    kept = Session.read(two.session.recovery_file)
    assert {"value": x, "name": "x", "spec": "_,_"} in kept["specs"]


def test_closing_during_a_hung_load_returns_at_once(qtbot, tmp_path):
    from shardscope.app.window.main_window import MainWindow

    started = tmp_path / "started"
    path = write_input(
        tmp_path,
        "hangs.py",
        f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('x')\ntime.sleep(600)\n",
    )
    window = MainWindow(auto_propagate=False)
    qtbot.addWidget(window)
    window.show()
    window.open_program(path)
    qtbot.waitUntil(started.exists, timeout=60_000)
    begin = time.monotonic()
    window.close()
    # Without cancelling, closing waits 10 s for the load and the load its 120 s limit.
    assert time.monotonic() - begin < 5
    assert window.runner.wait(0)  # the load has ended


def _settled(qtbot, window) -> None:
    """Until the window's background work for its program is over: its compile has come
    (a compile that ends during a measured selection repaints the window), no load or
    propagation is pending; limits far above any real need, for a machine under load."""
    qtbot.waitUntil(lambda: window.session.analysis.compiled is not None, timeout=180_000)
    qtbot.waitUntil(
        lambda: (
            not window.runner.busy
            and not window.propagation.pending
            and not window.propagation.compiler.compiling
        ),
        timeout=180_000,
    )


def _click_badge(qtbot, window, value_id):
    view = window.graph
    badge = view.badge_for(value_id)
    view.centerOn(badge)
    rect = badge.sceneBoundingRect()
    pos = view.mapFromScene(QPointF(rect.left() + 4, rect.center().y()))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.wait(80)


def test_a_selection_repaints_only_the_docks_it_changed(make_window, qtbot):
    window = make_window("example:mlp")
    _settled(qtbot, window)
    graph = window.session.graph
    x, w1 = graph.value_by_name("x").id, graph.value_by_name("params['w1']").id
    _click_badge(qtbot, window, x)
    assert window.selected_value == x
    tensor, provenance = window.docks["dock_tensor"], window.docks["dock_provenance"]
    untouched = [window.docks[name] for name in ("dock_mesh", "dock_palette", "dock_timeline")]
    wait_painted(qtbot, tensor, provenance, *untouched)
    with PaintLog(tensor, provenance, *untouched) as log:
        _click_badge(qtbot, window, x)  # the same tensor again
    assert window.selected_value == x
    assert log.events == []
    with PaintLog(tensor, provenance, *untouched) as log:
        _click_badge(qtbot, window, w1)
    assert window.selected_value == w1
    assert window.inspector.title.text() == "params['w1']"
    assert not log.region(tensor).isEmpty() and not log.region(provenance).isEmpty()
    assert all(log.region(dock).isEmpty() for dock in untouched)
    inspector = window.inspector
    assert log.area(tensor) < inspector.width() * inspector.height() / 2
    assert on_screen(inspector) == fresh(inspector)


def _badges_in_view(view):
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    return {
        b.value_id: b
        for b in view.badges
        if b.value_id is not None and visible.contains(b.sceneBoundingRect())
    }


def _click_shown_badge(qtbot, view, badge):
    rect = badge.sceneBoundingRect()
    pos = view.mapFromScene(QPointF(rect.left() + 4, rect.center().y()))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_selecting_another_tensor_repaints_each_widget_once_and_little_of_the_inspector(
    make_window, qtbot
):
    window = make_window("example:mlp")
    _settled(qtbot, window)
    view, graph = window.graph, window.session.graph
    badges = _badges_in_view(view)
    ranks = {}
    for vid in badges:
        ranks.setdefault(len(graph.values[vid].shape or ()), vid)
    assert 1 in ranks and 2 in ranks, "example:mlp shows a vector and a matrix"
    first, second = ranks[2], ranks[1]
    dock = window.docks["dock_tensor"]
    scroll_bar = dock.widget().verticalScrollBar()
    _click_shown_badge(qtbot, view, badges[first])
    qtbot.waitUntil(lambda: window.selected_value == first)
    wait_painted(qtbot, window)
    assert scroll_bar.isVisible()
    with PaintLog(window) as log:
        _click_shown_badge(qtbot, view, badges[second])
        qtbot.waitUntil(lambda: window.selected_value == second)
        wait_painted(qtbot, window)
    assert window.inspector.title.text() == graph.values[second].display_name
    # one paint per widget: nothing is repainted a second time once the layouts settle
    widgets = [w for w, _ in log.events]
    twice = {type(w).__name__ for w in widgets if widgets.count(w) > 1}
    assert not twice, f"repainted twice in one selection: {twice}"
    # a vector after a matrix: the chips, texts and tiles differ, not the whole dock
    painted = region_area(log.region(dock))
    assert 0 < painted <= 0.3 * dock.width() * dock.height()
    # the scroll bar stays: a bar that came and went would narrow the dock's contents
    assert scroll_bar.isVisible()
    inspector = window.inspector
    assert on_screen(inspector) == fresh(inspector)


def test_selecting_a_tensor_of_the_same_shape_and_sharding_repaints_its_texts_only(
    make_window, qtbot
):
    window = make_window("example:mlp")
    _settled(qtbot, window)
    view, graph, session = window.graph, window.session.graph, window.session
    badges = _badges_in_view(view)
    by_look = {}
    for vid in badges:
        key = (graph.values[vid].shape, session.laid_out_spec(vid))
        by_look.setdefault(key, []).append(vid)
    pair = next((vids[:2] for vids in by_look.values() if len(vids) > 1), None)
    assert pair, "example:mlp shows two tensors that look alike"
    _click_shown_badge(qtbot, view, badges[pair[0]])
    qtbot.waitUntil(lambda: window.selected_value == pair[0])
    wait_painted(qtbot, window)
    plot = window.inspector.tile_grid.plot
    with PaintLog(window) as log:
        _click_shown_badge(qtbot, view, badges[pair[1]])
        qtbot.waitUntil(lambda: window.selected_value == pair[1])
        wait_painted(qtbot, window)
    # the same tiles: the plot is not repainted at all, the dock only where texts differ
    assert region_area(log.region(plot)) == 0
    dock = window.docks["dock_tensor"]
    assert 0 < region_area(log.region(dock)) <= 0.08 * dock.width() * dock.height()
    assert on_screen(window.inspector) == fresh(window.inspector)


TORCH_CONFLICT = INPUTS / "torch" / "capture_conflict.json"
TORCH_BLOCK = INPUTS / "torch" / "capture_block.json"


def _value(window, name):
    return next(v for v in window.session.graph.values if v.name == name)


def test_a_torch_xla_capture_opens_on_gspmds_shardings_beside_shardys(make_window, qtbot):
    window = make_window(f"{TORCH_CONFLICT}#sync1")
    assert "(torch_xla program, partitioned by GSPMD)" in window.windowTitle()
    assert "torch_xla, partitioned by GSPMD" in window.status.text()
    for dock in ("dock_timeline", "dock_conflicts", "dock_provenance"):
        assert "Shardy's view of the same annotations" in window.docks[dock].windowTitle()
    panes = window.panes
    assert panes.on and panes.modes == ("gspmd", "shardy")
    qtbot.waitUntil(
        lambda: window.gspmd.compared_for is window.session.propagation, timeout=120_000
    )
    # sin(x) + y: GSPMD keeps the add on data (the window's own graph, left), Shardy
    # replicates it (right), and the difference is marked on both.
    (add,) = [op for op in window.session.graph.ops if op.short_name == "add"]
    out = add.results[0]
    assert set(panes.found) == {out}
    assert window.graph.badge_text(out) == "[data, _]"
    assert panes.right.view.badge_text(out) == "[_, _]"
    marks = [
        c.text
        for badge in window.graph.graph_scene.badges_of(out)
        for c in badge.childItems()
        if isinstance(c, GspmdMarkItem)
    ]
    assert marks == ["Shardy [_, _]"]
    # The Collectives dock lists torch_xla's own compiled collective.
    qtbot.waitUntil(lambda: window.collectives.compiled is not None, timeout=60_000)
    assert [c.kind for c in window.collectives.compiled] == ["collective-permute"]
    assert window.collectives.compiled_table.rowCount() == 1
    assert any("torch_xla's own compile" in m for m in window.messages.messages("warning"))
    dock = window.collectives
    assert "torch_xla's own compiled module (GSPMD), as the script ran it" in dock.header.text()
    # its line is the script's, where torch_xla's own metadata names torch's frames
    assert dock.compiled[0].line is not None and dock.compiled[0].file.endswith("conflict.py")


def test_a_torch_xla_tensor_shows_its_mark_sharding_text(make_window, qtbot):
    window = make_window(f"{TORCH_CONFLICT}#sync1")
    window.select_value(_value(window, "x").id)
    label = window.inspector.text_labels["torch_xla"]
    assert label.text() == 'xs.mark_sharding(t, mesh, ("data", None))'
    assert not label.isHidden() and not window.inspector.text_captions["torch_xla"].isHidden()
    assert window.inspector.text_labels["jax"].text() == "P('data', None)"


def test_clicking_a_torch_xla_weight_shows_the_call_that_sharded_it(make_window, qtbot):
    window = make_window(f"{TORCH_BLOCK}#sync2")
    qtbot.waitUntil(lambda: window.session.propagation is not None, timeout=120_000)
    _click_badge(qtbot, window, _value(window, "model.up.weight").id)
    label = window.inspector.text_labels["sharded_by"]
    script = (INPUTS / "torch" / "train_block.py").read_text().splitlines()
    line = next(i for i, t in enumerate(script, 1) if "mark_sharding(model.up.weight" in t)
    assert label.text() == f"xs.mark_sharding at train_block.py:{line}"
    assert not label.isHidden() and not window.inspector.text_captions["sharded_by"].isHidden()
    # a tensor the script did not shard has no such row
    _click_badge(qtbot, window, _value(window, "model.up.bias").id)
    assert window.inspector.text_labels["sharded_by"].isHidden()


def test_a_torch_xla_weight_clicked_in_the_tensor_table_shows_its_dtensor_placements(
    make_window, qtbot
):
    window = make_window(f"{TORCH_BLOCK}#sync2")
    window.docks["dock_program"].raise_()
    outline = window.outline
    outline.tabs.setCurrentIndex(1)
    qtbot.keyClicks(outline.filter, "model.up.weight")
    table = outline.table
    row = next(
        r
        for r in range(outline.proxy.rowCount())
        if outline.proxy.index(r, 0).data() == "model.up.weight"
    )
    index = outline.proxy.index(row, 0)
    table.scrollTo(index)
    qtbot.mouseClick(
        table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center()
    )
    inspector = window.inspector
    qtbot.waitUntil(lambda: inspector.title.text() == "model.up.weight")
    # train_block.py: xs.mark_sharding(model.up.weight, mesh, ("model", None)) on the
    # (data=4, model=2) mesh
    assert inspector.text_labels["torch_xla"].text() == (
        'xs.mark_sharding(t, mesh, ("model", None))'
    )
    label = inspector.text_labels["dtensor"]
    assert label.text() == "[Replicate(), Shard(0)]"
    assert not label.isHidden() and inspector.text_captions["dtensor"].text() == "DTensor"
    assert not inspector.text_captions["dtensor"].isHidden()


def test_a_jax_program_has_no_torch_xla_row_and_one_graph(make_window):
    window = make_window("example:mlp")
    window.select_value(window.session.graph.functions[window.session.graph.main].arguments[0])
    assert window.inspector.text_labels["torch_xla"].isHidden()
    assert window.inspector.text_labels["sharded_by"].isHidden()
    assert window.inspector.text_labels["dtensor"].isHidden()
    assert not window.panes.on and "GSPMD" not in window.windowTitle()
    assert window.docks["dock_conflicts"].windowTitle() == "Conflicts"


def test_a_corrupt_torch_capture_is_one_line_and_keeps_the_session(make_window, tmp_path):
    import json

    data = json.loads(TORCH_CONFLICT.read_text())
    data["functions"][0]["mlir"] = "module { this is not StableHLO"
    bad = tmp_path / "bad_torch.json"
    bad.write_text(json.dumps(data))
    window = make_window("example:mlp")
    before = (window.windowTitle(), window.session.program, window.panes.on)
    window.files.open_file(f"{bad}#sync1")
    deadline = time.time() + 60
    while time.time() < deadline and not window.messages.messages("error"):
        QApplication.processEvents()
        time.sleep(0.02)
    (error,) = window.messages.messages("error")
    assert "\n" not in error
    assert (window.windowTitle(), window.session.program, window.panes.on) == before


def _type_into(qtbot, spin, text: str) -> None:
    """Select a spin box's text, type ``text`` and press Enter, as a user does."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def test_hosts_typed_in_the_mesh_dock_draw_boundaries_and_undo_with_the_layout(
    make_window, qtbot, wait_idle
):
    from shardscope.backend.session.host_layout import HostLayout
    from shardscope.backend.sharding.hosts import apply_hosts

    window = make_window("example:mlp")
    wait_idle(window)
    session, editor = window.session, window.mesh_editor
    grid, iota = editor.grid, session.mesh
    assert grid.boundaries() == [] and editor.hosts_spin.value() == 1
    _type_into(qtbot, editor.hosts_spin, "2")
    assert session.hosts == HostLayout(2) and session.mesh == iota
    assert grid.boundaries() == [(2, 4), (3, 5)]
    assert grid.host_text() == "2 hosts, 4 devices each: h0 0–3 · h1 4–7"
    assert [editor.link_text(r) for r in range(2)] == ["both", "ICI"]
    assert window.qundo.text(0) == "hosts 2: 2 hosts of 4 devices"

    # 3 hosts do not split 8 devices: refused below the grid, nothing changes
    _type_into(qtbot, editor.hosts_spin, "3")
    assert session.hosts == HostLayout(2) and window.qundo.count() == 1
    assert "do not split evenly among 3 hosts" in editor.message.text()
    assert editor.hosts_spin.value() == 2
    assert any("among 3 hosts" in m for m in window.messages.messages("warning"))

    # model across hosts: the mesh takes run --dcn's order and propagates again
    before = window.propagation.count
    _type_into(qtbot, editor.factor_spin(1), "2")
    laid, hosts = apply_hosts(iota, None, "data=2,model=2")
    assert session.mesh == laid and session.hosts.count == hosts.count == 4
    assert window.qundo.text(1) == (
        "2 hosts along model (DCN): 4 hosts of 2 devices, DCN data=2,model=2"
    )
    assert [editor.link_text(r) for r in range(2)] == ["both", "DCN"]
    assert editor.hosts_spin.value() == 4
    assert (0, 1) in grid.boundaries()  # the model pairs of a row lie on two hosts
    qtbot.waitUntil(lambda: window.propagation.count > before, timeout=60_000)
    assert session.propagation.mesh == laid

    window.menu_actions["undo"].trigger()
    assert session.hosts == HostLayout(2) and session.mesh == iota
    assert grid.boundaries() == [(2, 4), (3, 5)] and editor.hosts_spin.value() == 2
    window.menu_actions["undo"].trigger()
    assert session.hosts == HostLayout() and grid.boundaries() == []
    assert editor.hosts_spin.value() == 1
    window.menu_actions["redo"].trigger()
    window.menu_actions["redo"].trigger()
    assert session.hosts.count == 4 and session.mesh == laid
    wait_idle(window)


def test_the_legend_button_stays_in_its_corner_through_find(make_window, qtbot):
    window = make_window("example:transformer?layers=4", propagate=False)
    window.resize(1600, 1000)
    qtbot.wait(50)
    button = window.legend_button
    port = window.graph.viewport()
    before = button.mapTo(window, button.rect().topLeft()), button.size()
    corner = port.mapTo(window, port.rect().bottomLeft())
    assert 0 < before[0].x() - corner.x() <= 12 and 0 < corner.y() - before[0].y() <= 40
    # Ctrl+F, type, Enter (the graph scrolls to the match), Escape.
    window.activateWindow()
    qtbot.keyClick(window.graph, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    box = window.graph_panel.find_box
    qtbot.waitUntil(box.hasFocus)
    qtbot.keyClicks(box, "w_out")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(window.graph.scene().selectedItems()))
    scrolled = window.graph.horizontalScrollBar().value(), window.graph.verticalScrollBar().value()
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.wait(20)
    assert scrolled != (0, 0)  # the view did scroll to the match
    assert (button.mapTo(window, button.rect().topLeft()), button.size()) == before
    assert button.isVisible()
    # Scrolling the graph by hand leaves it where it is too.
    window.graph.horizontalScrollBar().setValue(window.graph.horizontalScrollBar().value() + 120)
    qtbot.wait(20)
    assert button.mapTo(window, button.rect().topLeft()) == before[0]


def test_a_long_source_path_never_narrows_the_graph(make_window, qtbot):
    window = make_window("example:transformer?layers=4", propagate=False)
    window.resize(1600, 1000)
    qtbot.wait(50)
    width = window.graph_panel.width()
    graph = window.session.graph
    op = next(o for o in graph.ops if o.source_file)
    window.source_view.show_location(op.source_file, op.source_line, "x" * 200)
    qtbot.wait(50)
    assert "x" * 200 in window.source_view.header.text()
    assert window.graph_panel.width() == width >= 0.5 * window.width()


def test_the_first_click_on_a_tensor_fills_the_empty_inspector_in_place(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    ins, view = window.inspector, window.graph
    grid = ins.tile_grid
    wait_painted(qtbot, window)
    # before any selection: the grid's empty plot with the hint inside it, texts dashed
    assert ins.title.text() == "No tensor selected" and ins.hint.isVisible()
    assert grid.plot.isVisible() and ins.text_labels["kind"].text() == "\u2014"
    # the plot's box and its corner (the plot is as large as its tensor asks)

    def where():
        return grid.geometry(), grid.plot_box.geometry(), grid.plot.pos(), ins.details.geometry()

    places = where()
    badge = next(b for b in view.badges if b.value_id is not None and b.isVisible())
    view.centerOn(badge)
    at = view.mapFromScene(badge.sceneBoundingRect().center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: window.selected_value == badge.value_id)
    wait_painted(qtbot, window)
    assert ins.title.text() != "No tensor selected" and not ins.hint.isVisible()
    assert where() == places
    assert on_screen(ins) == fresh(ins)
    # another program clears the selection: back to the empty state, in the same places
    window.open_program("example:transformer")
    qtbot.waitUntil(lambda: ins.title.text() == "No tensor selected", timeout=60_000)
    wait_painted(qtbot, window)
    assert ins.hint.isVisible() and ins.slots == []
    assert where() == places
    assert on_screen(ins) == fresh(ins)


def test_closing_the_window_leaves_nothing_listening_to_its_models(make_window):
    window = make_window("example:mlp", propagate=False)
    window.panes.set_on(True)
    session, selection, navigation = window.session, window.selection, window.graph.navigation
    names = ("source", "program", "mesh", "hosts", "specs", "view", "propagation")
    names += ("final_specs", "compiled")
    assert len(session.events.program) > 0 and len(selection.events.device_groups) > 0
    window.close()
    listening = {name: len(getattr(session.events, name)) for name in names}
    assert listening == dict.fromkeys(names, 0)
    assert len(selection.events.device_groups) == len(selection.events.hovered_devices) == 0
    assert len(navigation.events.changed) == 0


def test_a_program_without_conflicts_says_so(make_window):
    window = make_window("example:mlp")
    assert window.conflicts.status.text().startswith("No conflicts")
    assert not window.markers.conflict_marks
    assert window.collectives.table.rowCount() == len(window.session.propagation.collectives)


def test_the_legend_opens_from_the_view_menu_and_the_graph(make_window, qtbot, pick):
    window = make_window("example:conflict", propagate=False)
    pick(window, "&View", "Badge &legend")
    dialog = window.legend_button.dialog
    assert dialog is not None and dialog.isVisible()
    button = window.legend_button
    assert button.parent() is window.graph and button.isVisible()  # over the viewport
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.legend_button.dialog is not dialog
    assert window.legend_button.dialog.isVisible()


def test_user_priority_and_open_dims_show_on_the_badge(make_window, wait_idle):
    window = make_window("example:conflict")
    x = window.session.graph.value_by_name("x").id
    assert window.on_spec_menu(x, 1, "open", None)
    assert window.on_spec_menu(x, 0, "priority", 1)
    dims = window.session.spec(x).dims
    assert dims[0].priority == 1 and dims[1].is_open
    notes = window.markers.note_marks
    assert [n.notes for n in notes] == [{0: "p1", 1: "?"}]
    wait_idle(window)


def test_stepping_to_where_the_conflict_was_settled_highlights_it(make_window, qtbot):
    window = make_window("example:conflict")
    compiled_in(qtbot, window)  # Esc cancels a compile under way
    conflicts = window.conflicts
    row = conflicts.list.topLevelItem(0)
    view = window.graph
    selected_before = [i for i in view.scene().selectedItems()]
    assert conflicts.settled == [] and not row.font(0).bold()
    # step 0 brings data into the add's first operand: after it the add keeps nothing
    window.timeline.panel.setFocus()
    qtbot.keyClick(window.timeline.panel, Qt.Key.Key_Right)
    assert window.timeline.playback.step_index == 0
    assert conflicts.settled == [0] and row.font(0).bold()
    assert conflicts.list.currentItem() is row
    assert "by longest common prefix" in conflicts.title.text()
    # highlighting is not choosing: the graph's selection stays as it was
    assert view.scene().selectedItems() == selected_before
    # back to the final state: the highlight goes
    qtbot.keyClick(window.timeline.panel, Qt.Key.Key_Escape)
    assert conflicts.settled == [] and not row.font(0).bold()
