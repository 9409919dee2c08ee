"""The timeline picture: a row per scope, a tick per step in its axis' colour, a legend."""

from types import SimpleNamespace

from PySide6.QtGui import QColor

from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.session.playback import Playback
from shardscope.backend.sharding.values import ValueSharding
from shardscope.viewers.common.colors import THEMES, axis_color
from shardscope.viewers.timeline.picture import LEFT, ROW_H, TOP, draw_timeline, timeline_rows


def _playback():
    scopes = ["layer0/a", "layer0/b", "layer1/a", "", "layer0/c"]
    graph = SimpleNamespace(ops=[SimpleNamespace(scope=s) for s in scopes])
    steps = [
        Step(0, 0, "stablehlo.dot", "data", "operand-0", ("result-0",), (1,)),
        Step(1, 1, "stablehlo.add", "model", "operand-0", ("result-0",), (2,)),
        Step(2, 2, "stablehlo.add", "data", "operand-0", ("result-0",), (3,)),
        Step(3, 3, "stablehlo.exp", "data", "operand-0", ("result-0",), (4,)),
        Step(4, 4, "stablehlo.tanh", "data", "operand-0", ("result-0",), (5,)),
        Step(4, 4, "stablehlo.tanh", "model", "operand-0", ("result-0",), (5,)),
    ]
    final = {v: ValueSharding((("data",),), (True,)) for v in range(1, 6)}
    return Playback(Timeline(steps, {}, final), graph)


def test_rows_follow_the_first_step_of_each_group():
    rows = timeline_rows(_playback())
    assert rows == [("layer0", [0, 1, 4]), ("layer1", [2]), ("stablehlo.exp", [3])]


def test_ticks_in_axis_colours_in_their_rows(qapp):
    pb = _playback()
    names = ("data", "model")
    image = draw_timeline(pb, names, THEMES["light"], width=900, title="t", mark=3)
    assert image.width() == 900 and image.height() == TOP + 3 * ROW_H + 34
    span = pb.timeline.last_index + 1
    plot_w = 900 - LEFT - 20

    def x_of(i):
        return int(LEFT + plot_w * (i + 0.5) / span)

    data, model = axis_color(names, "data"), axis_color(names, "model")
    row0 = TOP + ROW_H // 2
    assert image.pixelColor(x_of(0), row0) == data
    assert image.pixelColor(x_of(1), row0) == model
    # step 4 moved both axes: the row is split, data above and model below
    assert image.pixelColor(x_of(4), TOP + 5) == data
    assert image.pixelColor(x_of(4), TOP + ROW_H - 5) == model
    assert image.pixelColor(x_of(2), TOP + ROW_H + ROW_H // 2) == data
    # the marked step's cursor in the highlight colour
    assert image.pixelColor(x_of(3), TOP - 4) == QColor(THEMES["light"].highlight)


def test_an_empty_timeline_still_draws(qapp):
    image = draw_timeline(Playback(Timeline([], {}, {})), (), THEMES["dark"], width=800)
    assert image.width() == 800 and not image.isNull()
