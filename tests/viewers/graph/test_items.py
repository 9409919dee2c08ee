"""Graph items: badges side by side where edges converge."""

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
