"""Two graph views of one session, linked: they move, select and fold together."""

import pytest
from PySide6.QtCore import Qt

from shardscope.viewers.graph.graph_panel import GraphPanel
from shardscope.viewers.graph.sync import ViewSync


@pytest.fixture
def linked(panel_for, qtbot):
    def make(source):
        session, left = panel_for(source)
        right = GraphPanel(session)
        qtbot.addWidget(right)
        right.resize(1000, 700)
        right.show()
        right.view.share_layouts(left.view)
        sync = ViewSync(left.view, right.view)
        return session, left.view, right.view, sync

    return make


def centre(view):
    return view.mapToScene(view.viewport().rect().center())


def test_zooming_and_scrolling_one_moves_the_other(linked, qtbot):
    session, a, b, sync = linked("example:transformer?layers=2")
    b.zoom(1.8)
    assert a.transform().m11() == pytest.approx(b.transform().m11())
    b.horizontalScrollBar().setValue(b.horizontalScrollBar().value() + 120)
    b.verticalScrollBar().setValue(b.verticalScrollBar().value() + 300)
    assert (centre(a) - centre(b)).manhattanLength() < 2
    a.verticalScrollBar().setValue(a.verticalScrollBar().value() - 100)
    assert (centre(a) - centre(b)).manhattanLength() < 2
    assert sync.leader is a


def test_selecting_a_badge_or_a_node_in_one_selects_it_in_the_other(linked, qtbot):
    session, a, b, sync = linked("example:mlp")
    badge = next(x for x in b.badges if x.value_id is not None)
    b.centerOn(badge)
    qtbot.mouseClick(
        b.viewport(),
        Qt.MouseButton.LeftButton,
        pos=b.mapFromScene(badge.sceneBoundingRect().center()),
    )
    assert b.scene().selectedItems() == [badge]
    (chosen,) = a.scene().selectedItems()
    assert chosen.value_id == badge.value_id and chosen.pos() == badge.pos()
    node = next(n for n in a.nodes if n.node.kind == "op")
    a.scene().clearSelection()
    assert b.scene().selectedItems() == []
    node.setSelected(True)
    assert [n.index for n in b.scene().selectedItems()] == [node.index]


def test_folding_in_one_folds_the_other_with_the_same_layout(linked, qtbot):
    session, a, b, sync = linked("example:transformer?layers=2")
    scope = next(n for n in b.nodes if n.node.kind == "scope")
    b.centerOn(scope)
    qtbot.mouseDClick(b.viewport(), Qt.MouseButton.LeftButton, pos=b.mapFromScene(scope.pos()))
    assert scope.node.scope in b.expanded()
    assert a.state_key() == b.state_key()
    assert a.layout_ is b.layout_  # laid out once, for both
    assert [n.pos() for n in a.nodes] == [n.pos() for n in b.nodes]
    # once the views settle (scroll bars shown), both look at the same point
    qtbot.waitUntil(lambda: (centre(a) - centre(b)).manhattanLength() < 2, timeout=2000)
    a.collapse_all()
    assert b.expanded() == frozenset()


def test_after_close_they_go_their_own_ways(linked, qtbot):
    session, a, b, sync = linked("example:transformer?layers=2")
    sync.close()
    scale = a.transform().m11()
    b.zoom(2.0)
    b.expand_all()
    assert a.transform().m11() == pytest.approx(scale)
    assert a.expanded() != b.expanded()


def test_a_view_building_in_slices_follows_when_its_drawing_is_whole(linked, qtbot, monkeypatch):
    monkeypatch.setattr("shardscope.viewers.graph.sliced.SLICE_OPS", 0)
    session, a, b, sync = linked("example:transformer?layers=2")
    a.in_slices = b.in_slices = True
    a.expand_all()
    assert a.folding and not b.folding
    qtbot.waitUntil(lambda: not a.folding and not b.folding and a.state_key() == b.state_key())
    assert not any(n.kind == "scope" for n in b.layout_.nodes)
    qtbot.waitUntil(lambda: (centre(a) - centre(b)).manhattanLength() < 2, timeout=2000)


def test_linked_views_share_one_navigation_until_closed(linked, qtbot):
    session, a, b, sync = linked("example:transformer?layers=2")
    assert b.navigation is a.navigation
    sync.close()
    assert b.navigation is not a.navigation
    assert b.navigation.to_json() == a.navigation.to_json()


def test_two_views_given_one_navigation_show_the_same_place(panel_for, qtbot):
    session, left = panel_for("example:transformer?layers=2")
    right = GraphPanel(session, restore=False, navigation=left.view.navigation)
    qtbot.addWidget(right)
    a, b = left.view, right.view
    scope = next(n.node.scope for n in a.nodes if n.node.kind == "scope")
    a.set_expanded(scope, True)
    assert scope in b.expanded() and b.state_key() == a.state_key()
    b.collapse_all()
    assert a.expanded() == frozenset() == a.navigation.unfolded()
    op = next(n.node.op for n in b.nodes if n.node.op is not None and b.enter_op(n.node.op))
    assert a.frames == b.frames and len(a.frames) == 2, op
    a.back()
    assert [f.key() for f in b.frames] == [session.graph.main]
