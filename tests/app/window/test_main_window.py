"""The main window on example:mlp: title, scopes, tensors, drops, undo, errors, files."""

import json

import pytest

from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.mime import axis_mime_data
from tests.app.conftest import wait_idle
from tests.support.qt_events import drop


def drop_axis(window, value_id: int, dim: int, axis):
    """Drop ``axis`` on dim ``dim`` of a value's badge, as a real drag would end."""
    view = window.graph
    badge = view.badge_for(value_id)
    view.centerOn(badge)
    pos = view.mapFromScene(badge.chip_scene_center(dim))
    mime = axis_mime_data(axis)  # QDropEvent does not own its data: keep it alive
    return drop(view, pos, mime), mime


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
    assert {d.objectName() for d in window.findChildren(type(window.mesh_dock))} >= {
        "dock_mesh",
        "dock_palette",
        "dock_tensor",
        "dock_source",
        "dock_messages",
        "dock_history",
    }


def test_drop_axis_on_badge_is_undoable(make_window, qtbot):
    window = make_window("example:mlp")
    session = window.session
    x = session.graph.value_by_name("x").id
    before = window.propagations
    drop_axis(window, x, 1, "model")
    assert session.spec(x) == Spec.of("data", "model")
    assert window.graph.badge_text(x) == "[data, model]"
    assert window.qundo.count() == 1 and "model" in window.qundo.text(0)
    if window.can_propagate:
        qtbot.waitUntil(lambda: window.propagations > before, timeout=60_000)
        assert session.propagation is not None
    window.undo_action.trigger()
    assert session.spec(x) == Spec.of("data", None)
    assert window.graph.badge_text(x) == "[data, _]"
    window.redo_action.trigger()
    assert session.spec(x) == Spec.of("data", "model")
    window.undo_action.trigger()
    wait_idle(qtbot, window)

    # "data" already splits dim 0 of x: the drop is refused and nothing changes.
    specs = dict(session.specs)
    drop_axis(window, x, 1, "data")
    assert dict(session.specs) == specs
    assert window.qundo.count() == 1 and window.qundo.index() == 0
    assert any("already shards dim 0" in m for m in window.messages.messages("error"))

    # Dropping "replicated" clears a dim.
    drop_axis(window, x, 0, None)
    assert session.spec(x) == Spec.of(None, None)
    wait_idle(qtbot, window)


def test_select_tensor_syncs_inspector_and_source(make_window):
    window = make_window("example:mlp", propagate=False)
    graph = window.session.graph
    add = next(op for op in graph.ops if op.name == "stablehlo.add")
    assert window.graph.select_value(add.results[0], center=True)
    assert window.selected_value == add.results[0]
    assert window.source_view.path and window.source_view.path.endswith("mlp.py")
    assert window.source_view.line == add.source_line
    assert window.source_view.header.text().startswith("mlp.py:")


def test_bad_program_reports_and_keeps_session(make_window, qtbot):
    window = make_window("example:mlp", propagate=False)
    session = window.session
    state = json.dumps(session.to_json(), sort_keys=True)
    window.open_program("example:does_not_exist")
    qtbot.waitUntil(lambda: window.loading is None, timeout=60_000)
    assert window.messages.messages("error")
    assert json.dumps(session.to_json(), sort_keys=True) == state
    assert window.windowTitle().startswith("mlp")


def test_save_and_open_session(make_window, qtbot, tmp_path):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    window.graph.collapse_all()
    path = tmp_path / "mlp.json"
    assert window.save_session_to(path)
    assert window.qundo.isClean()

    other = make_window(None, propagate=False)
    assert other.open_session(path)
    qtbot.waitUntil(lambda: other.session.program is not None, timeout=60_000)
    assert other.session.spec(x) == Spec.of("data", "model")
    assert other.graph.expanded() == frozenset()
    assert str(path) in other.settings.recent()


def test_recovery_file_restores_edits(make_window, qtbot, tmp_path):
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


def test_layout_and_theme_persist(make_window):
    window = make_window(None, propagate=False)
    window.toggle_theme()
    theme = window.theme
    window.close()
    again = make_window(None, propagate=False)
    assert again.theme == theme
    geometry, state = again.settings.window_state()
    assert geometry is not None and state is not None


def test_export_png_and_svg(make_window, tmp_path, qtbot):
    window = make_window("example:mlp", propagate=False)
    assert window.export(tmp_path / "g.png")
    assert window.export(tmp_path / "g.svg")
    assert (tmp_path / "g.png").stat().st_size > 5000
    assert "<svg" in (tmp_path / "g.svg").read_text()[:2000]


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


@pytest.mark.parametrize("size", [(1400, 900), (1100, 640)])
def test_the_inspector_never_squeezes_its_tile_grid(make_window, qtbot, size):
    # Wrapped sharding texts need more height in a narrow dock than its layout first
    # reserved; the tile grid's own widgets must still sit one below the other.
    window = make_window("example:attention", propagate=False)
    window.resize(*size)
    window.select_value(window.session.graph.value_by_name("params['wk']").id)
    qtbot.wait(50)
    grid = window.inspector.tile_grid
    assert grid.height() >= grid.minimumSizeHint().height()
    assert grid.plot.geometry().bottom() < grid.status.geometry().top()


def test_no_opengl_anywhere(make_window):
    """The app must stay usable over X11 forwarding: nothing may draw through OpenGL."""
    import pyqtgraph as pg

    window = make_window("example:mlp", propagate=False)
    window.select_value(window.session.graph.value_by_name("x").id)
    window.grab()
    from PySide6.QtWidgets import QApplication

    # pyqtgraph imports Qt's OpenGL bindings, but no widget may be an OpenGL surface
    assert not pg.getConfigOption("useOpenGL")
    gl = [w for w in QApplication.allWidgets() if w.inherits("QOpenGLWidget")]
    assert not gl, gl


def test_an_idle_window_does_not_repaint(make_window, qtbot):
    """Over X11 forwarding every repaint crosses the network: idle means no paint events."""
    from PySide6.QtCore import QEvent, QObject

    class Count(QObject):
        paints = 0

        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                Count.paints += 1
            return False

    window = make_window("example:mlp")
    wait_idle(qtbot, window)
    qtbot.wait(300)
    counter = Count()
    from PySide6.QtWidgets import QWidget

    widgets = [window, *window.findChildren(QWidget)]
    for widget in widgets:
        widget.installEventFilter(counter)
    qtbot.wait(1000)
    for widget in widgets:
        widget.removeEventFilter(counter)
    assert Count.paints == 0
