"""Expand all and collapse all on a 24-layer model, as a user meets them: the window keeps
answering while the drawing is built, says so in the status bar, Esc or Cancel stops
it with nothing changed, and an edit made meanwhile is kept."""

from PySide6.QtCore import Qt, QTimer

from shardscope.backend.program.layout import all_scopes
from shardscope.backend.session.edits import SetDimSpec

BIG = "example:transformer?layers=24"


def every_scope(window):
    view = window.graph
    return frozenset(all_scopes(window.session.graph, view.index, view.frame))


def test_expand_all_keeps_the_event_loop_turning_and_shows_its_progress(make_window, qtbot, pick):
    window = make_window(BIG, propagate=False)
    folding = window.folding
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(window.graph.folding))
    timer.start(10)
    pick(window, "&View", "E&xpand all scopes")
    assert folding.running and folding.busy.isVisible() and folding.cancel_button.isVisible()
    assert folding.label.text() == "Unfolding every scope… (Esc cancels)"
    qtbot.waitUntil(lambda: not folding.running, timeout=60_000)
    timer.stop()
    assert sum(ticks) >= 5  # the timer fired again and again while it was drawn
    assert window.graph.expanded() == every_scope(window)
    assert not any(n.kind == "scope" for n in window.graph.layout_.nodes)
    assert not folding.busy.isVisible() and not folding.cancel_action.isEnabled()
    assert folding.last.startswith("Unfolding every scope: done in")
    assert window.statusBar().currentMessage() == folding.last
    pick(window, "&View", "&Collapse all scopes")
    qtbot.waitUntil(lambda: not folding.running, timeout=60_000)
    assert window.graph.expanded() == frozenset()


def test_esc_cancels_expand_all_and_the_graph_stays_as_it_was(make_window, qtbot, pick):
    window = make_window(BIG, propagate=False)
    view = window.graph
    layout, state = view.layout_, view.state_key()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    pick(window, "&View", "E&xpand all scopes")
    assert window.folding.cancel_action.isEnabled()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not window.folding.running
    assert window.folding.last == "Unfolding every scope: cancelled"
    qtbot.wait(300)  # a layout that arrives later is dropped
    assert view.layout_ is layout and view.state_key() == state
    assert not window.folding.cancel_action.isEnabled()  # Esc is free for the rest again


def test_the_cancel_button_stops_it_too(make_window, qtbot, pick):
    window = make_window(BIG, propagate=False)
    layout = window.graph.layout_
    pick(window, "&View", "E&xpand all scopes")
    qtbot.mouseClick(window.folding.cancel_button, Qt.MouseButton.LeftButton)
    assert not window.folding.running and window.graph.layout_ is layout


def test_an_edit_made_meanwhile_is_kept_and_folding_a_scope_drops_the_job(make_window, qtbot, pick):
    window = make_window(BIG, propagate=False)
    graph = window.session.graph
    view = window.graph
    tokens = graph.value_by_name("tokens").id
    pick(window, "&View", "E&xpand all scopes")
    assert window.push(SetDimSpec(tokens, 1, "model")), window.messages.messages("error")
    qtbot.waitUntil(lambda: not window.folding.running, timeout=60_000)
    assert window.folding.last.startswith("Unfolding every scope: done in")
    assert view.badge_text(tokens) == "[data, model]"
    assert window.session.spec(tokens) is not None and window.qundo.count() == 1
    pick(window, "&View", "&Collapse all scopes")
    scope = "jvp(layer_3)"
    view.set_expanded(scope, False)  # the user folds one scope while all fold
    qtbot.waitUntil(lambda: not window.folding.running, timeout=60_000)
    assert window.folding.last == "Folding every scope: dropped: the view changed meanwhile"
    assert scope not in view.expanded() and len(view.expanded()) > 1


def test_unfolding_one_scope_by_hand_is_drawn_in_the_background_where_it_was(make_window, qtbot):
    window = make_window(BIG, propagate=False)
    view = window.graph
    item = next(n for n in view.nodes if n.node.kind == "scope" and n.node.scope == "jvp(layer_5)")
    view.centerOn(item)
    where = view.mapFromScene(item.pos())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert window.folding.running
    assert window.folding.label.text() == "Unfolding jvp(layer_5)… (Esc cancels)"
    qtbot.waitUntil(lambda: not window.folding.running, timeout=60_000)
    assert "jvp(layer_5)" in view.expanded()
    first = next(n for n in view.nodes if (n.node.scope or "").startswith("jvp(layer_5)"))
    assert (view.mapFromScene(first.pos()) - where).manhattanLength() < 4
