"""The docks: every registered dock built with its title, object name and area, shown and
hidden from the View menu, in the default layout, and restored from a saved layout."""

import itertools

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QLabel, QMainWindow, QWidget

from shardscope.app.window.docks import (
    DOCKS,
    RIGHT,
    DockContext,
    DockSpec,
    build_docks,
    graph_share,
    make_room,
)
from shardscope.app.window.main_window import MainWindow
from shardscope.backend.session.document import Session
from shardscope.backend.session.selection import Selection
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.mesh.editor import MeshEditor
from shardscope.viewers.tensor.dim_slot import DimSlot
from tests.support.dialogs import answer_picker
from tests.support.file_menu import answer_open
from tests.support.inputs import INPUTS

LEFT = Qt.DockWidgetArea.LeftDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea
LEFT_BUTTON = Qt.MouseButton.LeftButton

# Saved layouts find docks by object name: these never change.
EXPECTED = {
    "Mesh": ("dock_mesh", LEFT),
    "Spec palette": ("dock_palette", LEFT),
    "Tensor": ("dock_tensor", RIGHT),
    "Source": ("dock_source", RIGHT),
    "Messages": ("dock_messages", BOTTOM),
    "History": ("dock_history", LEFT),
    "Program": ("dock_program", LEFT),
    "Conflicts": ("dock_conflicts", BOTTOM),
    "Collectives": ("dock_collectives", BOTTOM),
    "GSPMD vs Shardy": ("dock_gspmd", BOTTOM),
    "Run": ("dock_run", BOTTOM),
    "Timeline": ("dock_timeline", BOTTOM),
    "Provenance": ("dock_provenance", RIGHT),
}


def dock_titled(window, title: str) -> QDockWidget:
    (dock,) = [d for d in window.findChildren(QDockWidget) if d.windowTitle() == title]
    return dock


def test_every_registered_dock_is_built(make_window):
    window = make_window(None, propagate=False)
    assert {s.title: (s.name, s.area) for s in DOCKS} == EXPECTED
    for spec in DOCKS:
        dock = dock_titled(window, spec.title)
        assert dock.objectName() == spec.name
        assert window.dockWidgetArea(dock) == spec.area
        assert dock is window.docks[spec.name]
        assert not dock.isHidden()


def test_view_menu_hides_and_shows_each_dock(make_window, pick, find_action):
    window = make_window("example:mlp", propagate=False)
    for spec in DOCKS:
        dock = dock_titled(window, spec.title)
        assert find_action(window, "&View", spec.title).isChecked()
        pick(window, "&View", spec.title)
        assert dock.isHidden()
        assert not find_action(window, "&View", spec.title).isChecked()
        pick(window, "&View", spec.title)
        assert not dock.isHidden()


def test_a_closed_program_dock_reopens_from_the_view_menu(make_window, qtbot, pick):
    window = make_window("example:mlp", propagate=False)
    program = window.docks["dock_program"]
    program.close()  # its title bar's close button
    assert program.isHidden()
    pick(window, "&View", "Program")
    qtbot.waitUntil(lambda: not program.isHidden())


def test_default_layout(make_window, qtbot):
    window = make_window(None, propagate=False)
    qtbot.wait(10)  # the window lays its docks out once shown
    docks = window.docks
    mesh, palette, history = docks["dock_mesh"], docks["dock_palette"], docks["dock_history"]
    assert palette.x() == mesh.x() and palette.y() > mesh.y()
    assert docks["dock_source"].y() > docks["dock_tensor"].y()
    program = docks["dock_program"]
    assert window.tabifiedDockWidgets(program) == [history]
    assert program.y() > palette.y()
    assert not program.visibleRegion().isEmpty()  # on top of its tab group
    assert history.visibleRegion().isEmpty()
    assert mesh.width() < docks["dock_tensor"].width() < window.graph_panel.width()
    # The debugger's docks share the messages' place, the conflicts on top.
    conflicts = docks["dock_conflicts"]
    assert set(window.tabifiedDockWidgets(conflicts)) == {
        docks["dock_messages"],
        docks["dock_collectives"],
        docks["dock_gspmd"],
        docks["dock_run"],
    }
    assert not conflicts.visibleRegion().isEmpty()
    # The timeline gets its height although the columns above ask for more than 900 px.
    qtbot.waitUntil(lambda: docks["dock_timeline"].height() >= 140)


def test_a_hidden_dock_stays_hidden_in_the_next_window(make_window, pick):
    window = make_window(None, propagate=False)
    pick(window, "&View", "Messages")
    window.close()
    again = make_window(None, propagate=False)
    assert again.docks["dock_messages"].isHidden()
    assert not again.docks["dock_source"].isHidden()


def test_a_new_dock_is_one_registration(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    notes = DockSpec(
        "Notes", "dock_notes", RIGHT, lambda _context: QLabel("notes"), tabify_with="dock_source"
    )
    context = DockContext(Session(), Selection())
    docks = build_docks(window, context, (*DOCKS, notes))
    dock = docks["dock_notes"]
    assert dock.windowTitle() == "Notes" and dock.objectName() == "dock_notes"
    assert docks.widget("dock_notes", QLabel).text() == "notes"
    assert window.tabifiedDockWidgets(dock) == [docks["dock_source"]]
    assert dock.toggleViewAction() in docks.toggle_actions()


def test_asking_a_dock_for_the_wrong_widget_kind_fails(make_window):
    window = make_window(None, propagate=False)
    assert isinstance(window.docks.widget("dock_mesh", MeshEditor), MeshEditor)
    with pytest.raises(TypeError, match="dock_tensor shows a TensorInspector, not a MeshEditor"):
        window.docks.widget("dock_tensor", MeshEditor)


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


def test_the_tensor_dock_labels_three_digit_device_ids(make_window, qtbot, drop_axis):
    window = make_window("example:mlp", propagate=False)
    window.mesh_editor.meshEdited.emit(parse_mesh("data=8,model=16"))
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    window.select_value(x)
    qtbot.wait(50)
    grid = window.inspector.tile_grid
    labels = grid.layers.labels
    view = grid.plot
    placed = labels.placed(labels.deviceTransform(view.viewportTransform()))
    texts = {text for _, text, _, _ in placed}
    assert texts == {str(d) for d in range(128)}
    sizes = {size for *_, size in placed}
    assert len(sizes) == 1 and sizes.pop() >= 6.0


@pytest.mark.parametrize("mesh", ["data=2,model=4,pipe=2", "replica=2,data=2,model=4,pipeline=2"])
def test_the_mesh_dock_headers_of_a_device_grid_never_overlap(make_window, qtbot, mesh):
    window = make_window(None, propagate=False)
    window.mesh_editor.meshEdited.emit(parse_mesh(mesh))
    qtbot.wait(50)
    grid = window.mesh_editor.grid
    fm = QFontMetrics(grid.font())
    drawn = [fm.boundingRect(rect, align, text) for rect, text, _, align in grid._captions]
    drawn += grid._cells
    for i, a in enumerate(drawn):
        for b in drawn[i + 1 :]:
            assert not a.intersects(b), (a, b)


def test_the_tensor_dock_fits_a_rank_4_tensor_with_wide_specs(make_window, qtbot):
    window = make_window("example:attention", propagate=False)
    window.mesh_editor.meshEdited.emit(parse_mesh("data=2,model=2,seq=2"))
    value = next(v for v in window.session.graph.values if len(v.shape or ()) == 4)
    for dim, axis in ((0, "data"), (0, "seq"), (1, "model")):
        assert window.on_spec_dropped(value.id, dim, axis)
    window.select_value(value.id)
    qtbot.wait(50)
    inspector = window.inspector
    viewport = inspector.parentWidget()  # the dock's scroll area shows this much
    assert inspector.width() <= viewport.width()
    assert len(inspector.slots) == 4
    for slot in inspector.slots:
        assert viewport.rect().contains(slot.mapTo(viewport, slot.rect().bottomRight()))


def test_a_rank_2_tensor_after_a_rank_3_one_shows_two_dimensions(make_window, qtbot):
    window = make_window("example:attention", propagate=False)
    graph = window.session.graph
    inspector = window.inspector
    window.select_value(graph.value_by_name("x").id)
    qtbot.wait(50)
    window.select_value(graph.value_by_name("params['wk']").id)
    # what a repaint right now would draw, before Qt deletes anything
    stale = [s for s in inspector.findChildren(DimSlot) if s.isVisible()]
    assert all(s in inspector.slots for s in stale)
    qtbot.wait(50)
    shown = [s for s in inspector.findChildren(DimSlot) if s.isVisible()]
    assert sorted(s.dim for s in shown) == [0, 1]
    a, b = (s.geometry() for s in shown)
    assert not a.intersects(b)


def test_a_wrapped_hlo_text_never_runs_into_the_kind_row(make_window, qtbot):
    window = make_window("example:attention", propagate=False)
    window.mesh_editor.meshEdited.emit(
        parse_mesh("data=2,model=2,seq=2", device_order="0,4,1,5,2,6,3,7")
    )
    value = next(v for v in window.session.graph.values if len(v.shape or ()) == 4)
    window.select_value(value.id)
    window.resizeDocks([window.docks["dock_tensor"]], [421], Qt.Orientation.Horizontal)
    qtbot.wait(50)
    for dim, axis in ((0, "data"), (2, "seq")):
        assert window.on_spec_dropped(value.id, dim, axis)
    qtbot.wait(50)
    labels = [window.inspector.text_labels[k] for k in ("jax", "sdy", "hlo", "kind")]
    assert "\n" not in labels[2].text()
    assert labels[2].heightForWidth(labels[2].width()) > labels[3].height()  # it wraps
    for above, below in itertools.pairwise(labels):
        assert above.height() >= above.heightForWidth(above.width())
        assert above.geometry().bottom() < below.geometry().top()


def test_a_restored_layout_keeps_its_own_dock_sizes(make_window, qtbot):
    window = make_window(None, propagate=False)
    qtbot.wait(10)
    window.resizeDocks([window.docks["dock_tensor"]], [300], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: abs(window.docks["dock_tensor"].width() - 300) < 10)
    window.close()
    again = make_window(None, propagate=False)
    qtbot.wait(10)
    assert again.docks.restored
    assert abs(again.docks["dock_tensor"].width() - 300) < 10


def test_making_room_grows_a_short_dock_and_leaves_the_graph_half_the_height(make_window, qtbot):
    window = make_window(None, propagate=False)
    window.resize(1600, 1000)
    settled(qtbot, window)
    run = window.docks["dock_run"]
    before = run.height()
    assert before < 0.3 * window.height()
    make_room(window, run)
    qtbot.waitUntil(lambda: run.height() > before)
    assert not run.visibleRegion().isEmpty()  # on top of its tab group
    settled(qtbot, window)
    width, height = graph_share(window)
    assert width >= 0.5 and height >= 0.5, (width, height)
    # In a tall window it gets more, still leaving the graph half the height.
    window.resize(1600, 1600)
    settled(qtbot, window)
    make_room(window, run)
    qtbot.waitUntil(lambda: run.height() >= 0.3 * window.height())
    assert 0.5 <= graph_share(window)[1] < 0.55
    # A dock the user made taller than half the window stays so.
    window.resizeDocks([run], [int(0.6 * window.height())], Qt.Orientation.Vertical)
    qtbot.wait(10)
    tall = run.height()
    assert tall >= 0.45 * window.height()
    make_room(window, run)
    qtbot.wait(10)
    assert run.height() == tall
    run.setFloating(True)
    run.resize(500, 200)
    make_room(window, run)
    qtbot.wait(10)
    assert run.isFloating() and run.height() == 200


@pytest.mark.parametrize("size", [(1600, 1000), (1920, 1080)])
def test_the_graph_has_half_the_window_in_the_default_layout(make_window, qtbot, size):
    window = make_window("example:transformer?layers=2", propagate=False)
    window.resize(*size)
    settled(qtbot, window)
    width, height = graph_share(window)
    assert width >= 0.5 and height >= 0.5, (width, height)
    assert window.graph.height() >= 0.3 * window.height()  # the drawing, under the bars


def test_a_short_window_keeps_half_its_height_for_the_graph(make_window, qtbot):
    window = make_window(None, propagate=False)
    window.resize(1400, 900)
    settled(qtbot, window)
    assert graph_share(window)[1] >= 0.5
    assert window.docks["dock_timeline"].height() >= 110


def lines_shown(view) -> float:
    return view.viewport().height() / view.fontMetrics().lineSpacing()


def test_the_provenance_dock_is_readable_and_never_three_lines(make_window, qtbot):
    window = make_window("example:mlp")
    window.resize(1600, 1000)
    settled(qtbot, window)
    dock = window.docks["dock_provenance"]
    view = window.timeline.provenance_view
    assert not dock.visibleRegion().isEmpty()
    assert lines_shown(view) >= 12
    # The user drags the splitter above it as far down as it goes: eight lines stay.
    window.resizeDocks([dock], [10], Qt.Orientation.Vertical)
    qtbot.wait(10)
    assert lines_shown(view) >= 8
    # A short window keeps them too.
    window.resize(1400, 700)
    settled(qtbot, window)
    assert lines_shown(view) >= 8


def dock_places(window) -> dict:
    """Where each dock is: its area, floating, the docks tabbed with it, and whether it is
    the tab shown."""
    return {
        name: (
            window.dockWidgetArea(dock),
            dock.isFloating(),
            dock.isHidden(),
            sorted(d.objectName() for d in window.tabifiedDockWidgets(dock)),
            not dock.visibleRegion().isEmpty(),
        )
        for name, dock in window.docks.by_name.items()
    }


def dock_rects(window) -> dict:
    """The geometry of each dock on screen."""
    return {
        name: dock.geometry()
        for name, dock in window.docks.by_name.items()
        if not dock.visibleRegion().isEmpty()
    }


def settled(qtbot, window) -> None:
    """Wait until no dock has moved for a while (the window lays its docks out over a few
    turns of the event loop)."""
    last = None
    for _ in range(100):
        qtbot.wait(60)
        now = dock_rects(window)
        if now == last:
            return
        last = now
    raise AssertionError("the docks kept moving")


def near(a: dict, b: dict, slack: int) -> bool:
    """Whether every dock of ``a`` is in ``b`` and within ``slack`` px of its place there."""
    return a.keys() == b.keys() and all(
        abs(ra.x() - rb.x()) <= slack
        and abs(ra.y() - rb.y()) <= slack
        and abs(ra.right() - rb.right()) <= slack
        and abs(ra.bottom() - rb.bottom()) <= slack
        for ra, rb in ((a[n], b[n]) for n in a)
    )


def test_reset_layout_puts_moved_and_closed_docks_back(make_window, qtbot, pick):
    # A new window at 1600x1000: the default layout.
    fresh = MainWindow(auto_propagate=False)
    qtbot.addWidget(fresh)
    fresh.resize(1600, 1000)
    fresh.show()
    fresh.open_program("example:mlp")
    qtbot.waitUntil(lambda: fresh.session.program is not None, timeout=60_000)
    settled(qtbot, fresh)
    default, rects = dock_places(fresh), dock_rects(fresh)
    fresh.close()
    window = make_window("example:mlp", propagate=False)
    window.resize(1600, 1000)
    settled(qtbot, window)
    docks = window.docks
    tensor, provenance = docks["dock_tensor"], docks["dock_provenance"]
    # The user floats the Tensor dock and closes Provenance with their title-bar buttons,
    # drags Messages to the left column and the Mesh dock's edge.
    qtbot.mouseClick(tensor.findChild(QAbstractButton, "qt_dockwidget_floatbutton"), LEFT_BUTTON)
    qtbot.mouseClick(
        provenance.findChild(QAbstractButton, "qt_dockwidget_closebutton"), LEFT_BUTTON
    )
    window.addDockWidget(LEFT, docks["dock_messages"])
    window.resizeDocks([docks["dock_mesh"]], [200], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: tensor.isFloating() and provenance.isHidden())
    qtbot.wait(20)
    assert dock_places(window) != default
    window.close()
    # The next window opens with the user's layout, until they reset it.
    again = make_window("example:mlp", propagate=False)
    again.resize(1600, 1000)
    qtbot.wait(50)
    assert again.docks.restored
    assert again.docks["dock_tensor"].isFloating() and again.docks["dock_provenance"].isHidden()
    pick(again, "&View", "&Reset layout")
    qtbot.wait(50)
    assert dock_places(again) == default
    # Each dock at its default size once the window is laid out.
    settled(qtbot, again)
    reset = dock_rects(again)
    assert near(reset, rects, 8), (reset, rects)
    assert graph_share(again) >= (0.5, 0.5)
    assert again.settings.window_state()[1] is None
    assert "default layout" in again.statusBar().currentMessage()
    # Reset twice in a row changes nothing more.
    pick(again, "&View", "&Reset layout")
    qtbot.wait(50)
    assert dock_places(again) == default
    qtbot.waitUntil(lambda: near(dock_rects(again), reset, 4))


SIDE_DOCKS = (
    "dock_mesh",
    "dock_palette",
    "dock_program",
    "dock_tensor",
    "dock_source",
    "dock_provenance",
)


def _side_widths(window) -> dict[str, int]:
    return {name: window.docks[name].width() for name in SIDE_DOCKS}


def test_opening_programs_keeps_the_side_docks_widths(make_window, qtbot, monkeypatch, pick):
    window = make_window("example:mlp")
    qtbot.wait(200)
    before = _side_widths(window)
    assert min(before.values()) > 250, before
    # A torch_xla capture opens on two panes, GSPMD's shardings beside Shardy's, whose
    # notes say what they wait for until the propagation and the comparison come.
    answer_open(monkeypatch, INPUTS / "torch" / "capture_block.json")
    answer_picker(qtbot, [], row=1)  # sync2, the second largest
    pick(window, "&File", "&Open program…")
    qtbot.waitUntil(lambda: window.session.program.name == "sync2", timeout=60_000)
    assert window.panes.on
    qtbot.waitUntil(lambda: window.session.propagation is not None, timeout=60_000)
    qtbot.waitUntil(
        lambda: window.gspmd.compared_for is window.session.propagation, timeout=120_000
    )
    qtbot.wait(200)
    after = _side_widths(window)
    assert all(abs(after[n] - before[n]) <= 3 for n in SIDE_DOCKS), (before, after)
    # and a JAX program opened after it
    count = window.propagation.count
    window.open_program("example:conflict")
    qtbot.waitUntil(lambda: window.propagation.count > count, timeout=60_000)
    assert window.session.program.name == "conflict"
    qtbot.wait(200)
    again = _side_widths(window)
    assert all(abs(again[n] - before[n]) <= 3 for n in SIDE_DOCKS), (before, again)


def _rect_in(widget, ancestor):
    """``widget``'s rectangle in ``ancestor``'s coordinates."""
    return widget.rect().translated(widget.mapTo(ancestor, widget.rect().topLeft()))


@pytest.mark.parametrize("size", [(1600, 1000), (1100, 700)])
def test_the_chosen_conflicts_table_and_rule_line_never_overlap(make_window, qtbot, size):
    from shardscope.viewers.debugger.conflicts import ConflictsView

    window = make_window("example:conflict")
    window.resize(*size)
    window.docks["dock_conflicts"].raise_()
    view = window.docks.widget("dock_conflicts", ConflictsView)
    qtbot.waitUntil(lambda: view.list.topLevelItemCount() == 1, timeout=30_000)
    row = view.list.visualItemRect(view.list.topLevelItem(0))
    qtbot.mouseClick(
        view.list.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(10, row.center().y())
    )
    table, rule, inserts = view.table, view.rule, view.partitioner
    qtbot.waitUntil(lambda: table.isVisible() and table.rowCount() == 3)

    def stacked() -> bool:
        rects = [_rect_in(w, view) for w in (view.title, table, rule, inserts)]
        return all(a.bottom() < b.top() for a, b in zip(rects, rects[1:], strict=False))

    # the result row whole inside the table, the Rule line under the table
    qtbot.waitUntil(stacked, timeout=10_000)
    last = table.visualRect(table.model().index(2, 0))
    assert table.cell_text(2, 0).startswith("result 0")
    assert last.top() >= 0 and last.bottom() <= table.viewport().height()
    # all of it in reach: the chosen conflict scrolls where the dock is shorter
    view.detail.ensureWidgetVisible(inserts)
    qtbot.waitUntil(lambda: not inserts.visibleRegion().isEmpty())


def _global_rect(widget):
    return widget.rect().translated(widget.mapToGlobal(widget.rect().topLeft()))


@pytest.mark.parametrize("size", [(1600, 1000), (800, 700)])
def test_the_collectives_dock_keeps_to_its_width_with_both_tabs_whole(make_window, qtbot, size):
    from PySide6.QtWidgets import QToolButton

    from shardscope.viewers.debugger.collectives_view import CollectivesView

    window = make_window("example:transformer")
    window.resize(*size)
    dock = window.docks["dock_collectives"]
    dock.raise_()
    view = window.docks.widget("dock_collectives", CollectivesView)
    qtbot.waitUntil(lambda: view.compiled_table.rowCount() > 0, timeout=120_000)
    table = view.compiled_table
    first = table.visualRect(table.model().index(0, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=first.center())
    qtbot.waitUntil(lambda: view.detail.explain.isVisible())
    # the user picks the hardware with the longest name from the picker
    combo = view.hardware
    longest = max(range(combo.count()), key=lambda i: len(combo.itemText(i)))
    combo.showPopup()
    popup = combo.view()
    qtbot.waitUntil(popup.isVisible)
    rect = popup.visualRect(popup.model().index(longest, 0))
    qtbot.mouseClick(popup.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: combo.currentIndex() == longest)
    label = combo.itemText(longest)

    def within() -> bool:
        area = _global_rect(dock)
        # the dock's own rows (what they hold scrolls or is cut inside them)
        shown = [w for w in view.children() if isinstance(w, QWidget) and w.isVisible()]
        return all(area.contains(_global_rect(w)) for w in [view, *shown])

    # every part of the dock inside it: nothing drawn over the docks beside it
    qtbot.waitUntil(within, timeout=10_000)
    for name in ("dock_source", "dock_provenance", "dock_tensor"):
        assert not _global_rect(dock).intersects(_global_rect(window.docks[name])), name
    # both tabs whole, with no scroll arrows
    tabs = view.tabs
    for i in range(tabs.count()):
        assert tabs.rect().contains(tabs.tabRect(i))
        assert tabs.tabRect(i).width() >= tabs.tabSizeHint(i).width()
    assert not [b for b in tabs.findChildren(QToolButton) if b.isVisible()]
    # the picker asks room for its whole label, has it in a wide window, and always
    # names it whole in its tooltip
    assert combo.sizeHint().width() > combo.fontMetrics().horizontalAdvance(label)
    assert label in combo.toolTip()
    if size[0] >= 1600:
        assert combo.shown_text == label


def test_the_mesh_grid_shows_every_device_and_the_program_dock_many_rows(make_window, qtbot):
    from PySide6.QtGui import QRegion

    from shardscope.viewers.mesh.editor import MeshEditor
    from shardscope.viewers.program.outline import ProgramOutline

    window = make_window("example:mlp", propagate=False)  # data=4 x model=2: four rows
    window.resize(1600, 1000)
    settled(qtbot, window)
    grid = window.docks.widget("dock_mesh", MeshEditor).grid

    def all_cells_shown() -> bool:
        seen = grid.visibleRegion()
        return all(
            seen.intersected(QRegion(grid.cell_rect(p))) == QRegion(grid.cell_rect(p))
            for p in range(8)
        )

    qtbot.waitUntil(all_cells_shown, timeout=5000)
    tree = window.docks.widget("dock_program", ProgramOutline).tree
    row = tree.fontMetrics().height()
    assert tree.viewport().height() >= 12 * row, (tree.viewport().height(), row)
