"""Graph items: badges side by side where edges converge."""

from PySide6.QtCore import QPointF

from shardscope.viewers.graph.items import BadgeItem, spread_badges


def test_converging_badges_move_apart_around_their_centre(panel_for):
    session, panel = panel_for("example:mlp")
    style = panel.view.style_
    axes = ("data", "model")
    badges = []
    for x in (470.0, 570.0, 1400.0):  # two edges into one op, and one far away
        badge = BadgeItem((len(badges),), style)
        badge.set_spec([("data",), (), ("model",), ()], "user", axes, "")
        badge.setPos(x, 300.0)
        badges.append(badge)
    assert badges[0].sceneBoundingRect().right() > badges[1].sceneBoundingRect().left()
    spread_badges(badges)
    a, b, c = (badge.sceneBoundingRect() for badge in badges)
    assert a.right() <= b.left()
    assert abs((badges[0].x() + badges[1].x()) / 2 - 520.0) < 1e-6
    assert badges[2].x() == 1400.0


def test_each_scope_region_holds_its_nodes_and_no_other(panel_for):
    """Regions of a fully unfolded model: every node of a scope inside its region, every
    node outside the scope outside it, and its name inside it."""
    from shardscope.viewers.graph.items import ScopeBoxItem

    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    view.expand_all()
    regions = [i for i in view.scene().items() if isinstance(i, ScopeBoxItem)]
    assert len(regions) == len(view.layout_.boxes) > 10
    nodes = view.layout_.nodes
    for region in regions:
        inside = set(region.box.nodes)
        outline = region._outline
        for i, node in enumerate(nodes):
            if node.kind not in ("op", "scope"):
                continue
            held = outline.contains(QPointF(node.x, node.y))
            assert held == (i in inside), (region.box.path, node.label, node.scope)
        header = region.header_rect()
        assert outline.contains(header.center())


def test_a_long_input_name_keeps_both_ends(panel_for, tmp_path):
    import re
    from html import unescape

    from shardscope.viewers.graph.graph_panel import export_view

    session, panel = panel_for("example:transformer?layers=2")
    out = tmp_path / "graph.svg"
    export_view(panel.view, out)
    texts = [unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", out.read_text())]
    long_names = [t for t in texts if t.startswith("params") and "\u2026" in t]
    assert long_names, [t for t in texts if "params" in t][:10]
    # the root and the last keys show, the middle keys go: params…[1]['w_out']
    assert all(re.search(r"\[\d+\]\['\w+'\]$", t) for t in long_names), long_names


def test_a_clicked_node_is_drawn_selected_at_once(panel_for, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor

    session, panel = panel_for("example:mlp")
    view = panel.view
    item = next(i for i in view.nodes if i.node.kind == "op")
    view.centerOn(item)
    qtbot.wait(20)
    selected = QColor(view.style_.theme.selected)

    def ring_pixels() -> int:
        image = view.viewport().grab().toImage()
        box = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
        return sum(
            image.pixelColor(x, y) == selected
            for x in range(max(0, box.left()), min(image.width(), box.right()))
            for y in range(max(0, box.top()), min(image.height(), box.bottom()))
        )

    assert ring_pixels() == 0
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(item.pos()))
    assert item.isSelected()
    qtbot.waitUntil(lambda: ring_pixels() > 20, timeout=2000)


def test_a_scope_region_is_outlined_with_its_name_strip_tinted_and_its_inside_left_clear(
    panel_for,
):
    """Unfolding a scope changes its nodes, edges and outline, not every pixel it covers
    (each one crosses a forwarded display)."""
    from PySide6.QtGui import QColor, QImage, QPainter

    from shardscope.viewers.graph.items import ScopeBoxItem

    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    view.set_expanded("jvp(layer_0)", True)
    region = next(
        i
        for i in view.scene().items()
        if isinstance(i, ScopeBoxItem) and i.box.path == "jvp(layer_0)"
    )
    bounds = region.boundingRect()
    image = QImage(int(bounds.width()) + 2, int(bounds.height()) + 2, QImage.Format.Format_RGB32)
    back = QColor("#101010")
    image.fill(back)
    painter = QPainter(image)
    painter.translate(-bounds.left() + 1, -bounds.top() + 1)
    region.paint(painter, None)
    painter.end()
    header = region.header_rect()
    below = header.center() + QPointF(0, header.height())
    inside = image.pixelColor(int(below.x() - bounds.left() + 1), int(below.y() - bounds.top() + 1))
    assert region._outline.contains(below)
    assert inside == back
    strip = image.pixelColor(
        int(header.left() - bounds.left() + 3), int(header.center().y() - bounds.top() + 1)
    )
    assert strip != back


def test_a_dimension_sharded_over_two_axes_is_drawn_as_one_chip_per_axis(panel_for, qtbot):
    from PySide6.QtGui import QColor

    from shardscope.backend.sharding.spec import Spec
    from shardscope.viewers.common.colors import axis_color

    session, panel = panel_for("example:mlp")
    view = panel.view
    x = session.graph.value_by_name("x").id
    session.set_spec(x, Spec.of(("model", "data"), None))
    qtbot.waitUntil(lambda: view.badge_text(x) == "[model+data, _]", timeout=5000)
    (badge,) = view.graph_scene._badges_by_value[x]
    view.centerOn(badge)
    chips = badge.axis_chips(0)
    assert [axis for axis, _ in chips] == ["model", "data"]
    assert chips[0][1].right() < chips[1][1].left()  # side by side, apart
    mesh = session.mesh.axis_names

    def color_at(rect) -> QColor:
        # just inside the chip's left edge, clear of its rounded corner and its text
        point = badge.mapToScene(QPointF(rect.left() + 2, rect.center().y()))
        image = view.viewport().grab().toImage()
        return image.pixelColor(view.mapFromScene(point))

    qtbot.waitUntil(
        lambda: (
            [color_at(r) for _, r in chips]
            == [QColor(axis_color(mesh, "model")), QColor(axis_color(mesh, "data"))]
        ),
        timeout=5000,
    )


def test_an_unfolded_scope_is_one_frame_with_one_name(panel_for, qtbot):
    """The mlp's layer1 sits in two columns (the bias broadcast beside the matmul, its
    inputs in between a row up): one region around all its ops, named once."""
    from shardscope.viewers.graph.items import ScopeBoxItem

    session, panel = panel_for("example:mlp")
    view = panel.view
    view.set_expanded("layer1", True)
    qtbot.waitUntil(
        lambda: any(isinstance(i, ScopeBoxItem) for i in view.scene().items()), timeout=5000
    )
    (region,) = [
        i for i in view.scene().items() if isinstance(i, ScopeBoxItem) and i.box.path == "layer1"
    ]
    assert len(region._outline.toSubpathPolygons()) == 1
    assert len(region._headers) == 1
    nodes = view.layout_.nodes
    inside = set(region.box.nodes)
    assert len(inside) > 3
    for i, node in enumerate(nodes):  # every op of it inside, every other node outside
        assert region._outline.contains(QPointF(node.x, node.y)) == (i in inside), node.label


def test_a_scope_shown_alone_is_one_frame_however_its_rows_shift(panel_for, qtbot):
    """The transformer's MLP shown alone (as ``render --scope`` draws it): its rows step
    left and right around the values it hands on, and still make one region, named once."""
    from shardscope.viewers.graph.items import ScopeBoxItem

    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    view.show_scope("jvp(layer_0)/mlp")
    qtbot.waitUntil(
        lambda: any(isinstance(i, ScopeBoxItem) for i in view.scene().items()), timeout=10_000
    )
    (region,) = [
        i
        for i in view.scene().items()
        if isinstance(i, ScopeBoxItem) and i.box.path.endswith("mlp")
    ]
    assert len(region._outline.toSubpathPolygons()) == 1
    assert len(region._headers) == 1
    inside = set(region.box.nodes)
    for i, node in enumerate(view.layout_.nodes):
        assert region._outline.contains(QPointF(node.x, node.y)) == (i in inside), node.label
