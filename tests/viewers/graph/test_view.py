"""The program graph view: folding, entering regions and callees, finding."""

import numpy as np
from PySide6.QtCore import Qt

from shardscope.backend.program.layout import Frame
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.graph.graph_panel import GraphPanel
from shardscope.viewers.graph.view import MIN_FIT_SCALE, SMALL_FRAME_NODES
from tests.support.paints import PaintLog, fresh, on_screen, wait_painted


def test_enter_region_and_callee_and_back(panel_for, qtbot):
    session, panel = panel_for("example:scan")
    view = panel.view
    loop = next(op for op in session.graph.ops if op.short_name == "while")
    item = view.nodes[view.layout_.node_of_op[loop.id]]
    view.centerOn(item)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(item.pos()))
    assert view.frame == Frame(session.graph.main, loop.id, 1)
    assert "while body" in panel.crumbs.text()
    labels = [item.node.label for item in view.nodes]
    assert any(label.startswith("call @") for label in labels)
    call = next(n for n in view.layout_.nodes if n.kind == "op" and n.label == "call @closed_call")
    assert view.enter_op(call.op)
    assert view.frame == Frame("closed_call")
    assert len(view.frames) == 3
    view.back(2)
    assert view.frame == Frame(session.graph.main)
    assert panel.back_button.isEnabled() is False


def test_large_program_opens_folded_and_layouts_are_cached(panel_for):
    session, panel = panel_for("example:transformer?layers=24")
    view = panel.view
    kinds = [n.kind for n in view.layout_.nodes]
    assert kinds.count("scope") >= 50 and kinds.count("op") < 20
    assert len(view.layout_.nodes) < 400
    first = view.layout_
    view.set_expanded("jvp(layer_3)", True)
    expanded = view.layout_
    assert expanded is not first
    inner = [n for n in expanded.nodes if (n.scope or "").startswith("jvp(layer_3)")]
    assert len(inner) > 1 and "jvp(layer_3)" in {b.path for b in expanded.boxes}
    view.set_expanded("jvp(layer_3)", False)
    assert view.layout_ is first  # cached per expansion state
    assert view.view_state()["expanded"][session.graph.main] == []


def test_find_selects_and_centres(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    assert not view.find("maximum")  # it lives in @relu: the find box enters it
    view.zoom(3.0)  # centring needs room to scroll
    assert view.find("dot_general")
    selected = view.scene().selectedItems()
    assert len(selected) == 1
    centre = view.mapToScene(view.viewport().rect().center())
    assert (selected[0].sceneBoundingRect().center() - centre).manhattanLength() < 40


def test_badges_follow_specs_without_relayout(panel_for):
    session, panel = panel_for("example:mlp")
    view = panel.view
    layout = view.layout_
    x = session.graph.value_by_name("x").id
    session.set_spec(x, Spec.of("data", "model"))
    assert view.badge_text(x) == "[data, model]"
    assert view.layout_ is layout


def test_dark_and_light_renders(panel_for, tmp_path, count_colors):
    session, panel = panel_for("example:mlp")
    for theme in ("dark", "light"):
        panel.view.set_style_theme(theme)
        image = panel.grab()
        image.save(str(tmp_path / f"graph_{theme}.png"))
        assert count_colors(image) > 30


def test_expand_all_and_collapse_all(panel_for):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    assert any(n.kind == "scope" for n in view.layout_.nodes)
    view.expand_all()
    assert not any(n.kind == "scope" for n in view.layout_.nodes)
    assert {b.path for b in view.layout_.boxes} >= {"jvp(layer_1)/attn", "sgd"}
    view.collapse_all()
    assert view.expanded() == frozenset()
    assert all(n.kind != "op" or not n.scope for n in view.layout_.nodes)


def test_a_saved_breadcrumb_naming_a_missing_frame_opens_at_main(programs, qtbot):
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.graph_panel import GraphPanel
    from tests.viewers.graph.conftest import program

    mlp = program(programs, "example:mlp")
    session = Session()
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    state = {"source": "example:mlp", "mesh": None, "specs": []}
    state["view"] = {"frames": ["main/op999.r0", "main"]}
    session.set_program(mlp, state=state)
    assert panel.view.frames == [Frame("main")]
    assert panel.crumbs.text() == "@main"


def test_a_view_that_does_not_restore_opens_at_the_outermost_frame(panel_for, qtbot):
    session, panel = panel_for("example:transformer?layers=2")
    panel.view.set_expanded("jvp(layer_1)", True)
    session.update_view(**panel.view.view_state())  # as the window keeps it
    fresh = GraphPanel(session, restore=False)
    qtbot.addWidget(fresh)
    again = GraphPanel(session)
    qtbot.addWidget(again)
    assert "jvp(layer_1)" not in fresh.view.expanded()
    assert "jvp(layer_1)" in again.view.expanded()


def test_show_scope_draws_that_scope_alone_unfolded(panel_for):
    session, panel = panel_for("example:transformer")
    view = panel.view
    folded = {item.node.label for item in view.nodes if item.node.kind == "scope"}
    assert "jvp(layer_1)" in folded
    view.show_scope("jvp(layer_1)")
    assert view.within == "jvp(layer_1)"
    ops = [item.node for item in view.nodes if item.node.kind == "op"]
    assert ops and all(node.scope.startswith("jvp(layer_1)") for node in ops)
    assert not [item for item in view.nodes if item.node.kind == "scope"]
    kinds = {item.node.kind for item in view.nodes}
    assert {"input", "output"} <= kinds
    # the layer's outputs carry badges with the session's specs
    assert view.badges


def _nodes_outside_the_viewport(view):
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    return [n.node.label for n in view.nodes if not shown.contains(n.sceneBoundingRect())]


def test_a_small_program_opens_fitted_whole_and_stays_so_after_propagation(
    qtbot, monkeypatch, tmp_path
):
    monkeypatch.setenv("SHARDSCOPE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("SHARDSCOPE_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "discard")
    from shardscope.app.window.main_window import MainWindow

    window = MainWindow(auto_propagate=True)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.open_program("example:mlp")
    qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
    view = window.graph
    assert view.nodes and _nodes_outside_the_viewport(view) == []
    qtbot.waitUntil(lambda: window.propagation.count > 0, timeout=60_000)
    qtbot.wait(50)
    assert _nodes_outside_the_viewport(view) == []
    # the first-run banner closed: the graph gets its room and is fitted to it again
    hint = window.help.hint
    if hint is not None and hint.isVisible():
        scale = view.transform().m11()
        qtbot.mouseClick(hint.close_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: view.transform().m11() > scale)
        assert _nodes_outside_the_viewport(view) == []
    # zoomed in by the user: no longer all in view, and a resize leaves the zoom be
    view.zoom(3.0)
    zoomed = view.transform().m11()
    assert _nodes_outside_the_viewport(view)
    window.resize(1300, 900)
    qtbot.wait(50)
    assert view.transform().m11() == zoomed
    window.close()
    window.runner.wait(30_000)


def test_a_large_frame_still_opens_at_a_legible_zoom(panel_for):
    _, panel = panel_for("example:transformer?layers=24")
    view = panel.view
    view.expand_all()
    assert len(view.layout_.nodes) > SMALL_FRAME_NODES
    assert view.transform().m11() >= MIN_FIT_SCALE


def _looks_the_same(shown, drawn) -> bool:
    """The screen shows what a fresh drawing does, but for the antialiased edges of what
    was scrolled by whole pixels (off by a shade, never a stale box, line or letter)."""
    a, b = (
        np.frombuffer(i.constBits(), np.uint8).reshape(i.height(), i.bytesPerLine())
        for i in (shown, drawn)
    )
    diff = np.abs(a.astype(int) - b.astype(int))
    return shown.size() == drawn.size() and diff.max() < 32 and (diff > 0).mean() < 0.01


def test_unfolding_a_scope_scrolls_what_moves_and_repaints_little_of_the_view(panel_for, qtbot):
    _, panel = panel_for("example:transformer")
    view = panel.view
    item = next(i for i in view.nodes if i.node.scope == "jvp(layer_1)")
    view.centerOn(item)
    viewport = view.viewport()
    wait_painted(qtbot, viewport)
    with PaintLog(viewport) as log:
        qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=view.mapFromScene(item.pos()))
        wait_painted(qtbot, viewport)
    assert "jvp(layer_1)" in view.expanded()
    full = viewport.width() * viewport.height()
    # what moved was scrolled in place: less than half the view is drawn again
    assert 0 < log.area(viewport) < full / 2
    assert _looks_the_same(on_screen(viewport), fresh(viewport))
    # and folding it back again
    with PaintLog(viewport) as log:
        view.set_expanded("jvp(layer_1)", False)
        wait_painted(qtbot, viewport)
    assert 0 < log.area(viewport) < full / 2
    assert _looks_the_same(on_screen(viewport), fresh(viewport))


def test_unfolding_repaints_the_scroll_bars_only_where_they_look_different(panel_for, qtbot):
    _, panel = panel_for("example:transformer")
    view = panel.view
    view.zoom(2.0)  # both bars shown
    view.centerOn(next(i for i in view.nodes if i.node.scope == "jvp(layer_1)"))
    wait_painted(qtbot, panel)
    bars = (view.horizontalScrollBar(), view.verticalScrollBar())
    ranges = [(bar.maximum(), bar.pageStep()) for bar in bars]
    with PaintLog(*bars) as log:
        view.set_expanded("jvp(layer_1)", True)
        wait_painted(qtbot, panel)
    assert [(bar.maximum(), bar.pageStep()) for bar in bars] != ranges
    # a new range moves the handles: the pixels they left and took, not both bars whole
    for bar in bars:
        assert bar.isVisible() and log.area(bar) < bar.width() * bar.height() / 4
        assert on_screen(bar) == fresh(bar)


def test_after_unfolding_and_folding_the_view_fits_and_lays_its_bars_out_as_before(
    panel_for, qtbot
):
    _, panel = panel_for("example:transformer?layers=4")
    view = panel.view
    panel.resize(1600, 1000)
    qtbot.wait(50)
    for scope in ("jvp()", "jvp(layer_1)"):
        view.set_expanded(scope, True)
        view.set_expanded(scope, False)
    # the scroll area lays its bars out after a range change, as before the unfoldings:
    # fitting (which changes the ranges while it scales) does not resize the view under
    # itself, over and over
    view.expand_all()
    view.collapse_all()
    view.fit()
    assert view._fitted
    bar = view.verticalScrollBar()
    view.zoom(3.0)
    qtbot.waitUntil(bar.isVisible)
    view.fit()
    qtbot.waitUntil(lambda: not bar.isVisible() or bar.maximum() > 0)


def test_zooming_repaints_the_blocks_that_changed(panel_for, qtbot):
    _, panel = panel_for("example:transformer")
    view = panel.view
    viewport = view.viewport()
    view.zoom(2.0)  # scroll bars shown: the drawing is larger than the view
    wait_painted(qtbot, viewport)
    with PaintLog(viewport) as log:
        view.zoom(1.18)
        wait_painted(qtbot, viewport)
    full = viewport.width() * viewport.height()
    # the empty background between the nodes is not sent again
    assert 0 < log.area(viewport) < 0.9 * full
    assert _looks_the_same(on_screen(viewport), fresh(viewport))
