"""The scrubber: groups drawn as bands, click and drag seek, the cursor's small repaints."""

from PySide6.QtCore import QPoint, Qt

from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.session.playback import Playback
from shardscope.backend.sharding.values import ValueSharding
from shardscope.viewers.timeline.scrubber import Scrubber


def _playback(n=100):
    steps = [
        Step(
            i,
            None,
            "stablehlo.add" if i < 50 else "stablehlo.dot",
            "a" if i % 20 < 10 else "b",
            "operand-0",
            ("result-0",),
            (i,),
        )
        for i in range(n)
    ]
    final = {i: ValueSharding((("a" if i % 20 < 10 else "b",),), (True,)) for i in range(n)}
    return Playback(Timeline(steps, {}, final))


def _scrubber(qtbot, pb):
    s = Scrubber()
    qtbot.addWidget(s)
    s.resize(500, 40)
    s.show()
    s.set_playback(pb, ("a", "b"))
    return s


def test_click_and_drag_seek(qtbot):
    pb = _playback()
    s = _scrubber(qtbot, pb)
    seen = []
    s.seekRequested.connect(seen.append)
    qtbot.mouseClick(s, Qt.MouseButton.LeftButton, pos=QPoint(250, 20))
    assert seen == [s.position_at(250)] and 45 <= seen[0] <= 55
    qtbot.mousePress(s, Qt.MouseButton.LeftButton, pos=QPoint(10, 20))
    qtbot.mouseMove(s, QPoint(490, 20))
    qtbot.mouseRelease(s, Qt.MouseButton.LeftButton, pos=QPoint(490, 20))
    assert seen[-1] >= 95
    assert s.position_at(-50) == 0 and s.position_at(5000) == 99
    # hovering names the step under the pointer
    qtbot.mouseMove(s, QPoint(5, 20))
    assert s.toolTip().startswith("step 0 · stablehlo.add · a")


def test_groups_and_cursor(qtbot):
    pb = _playback()
    s = _scrubber(qtbot, pb)
    assert [g.key for g in s.op_groups] == ["stablehlo.add", "stablehlo.dot"]
    assert len(s.axis_groups) == 10
    assert s.cursor_x() is None
    pb.seek(50)
    s.position_changed()
    assert abs(s.cursor_x() - 250) <= 3
    image = s.grab().toImage()
    # the cursor is drawn in the highlight colour where it stands, not far from it
    assert image.pixelColor(s.cursor_x(), 5) != image.pixelColor(s.cursor_x() + 40, 5)


def test_no_steps(qtbot):
    s = _scrubber(qtbot, Playback(Timeline([], {}, {})))
    seen = []
    s.seekRequested.connect(seen.append)
    qtbot.mouseClick(s, Qt.MouseButton.LeftButton, pos=QPoint(100, 20))
    assert seen == [] and s.op_groups == []
    s.grab()
