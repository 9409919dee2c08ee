"""The timeline panel on its own: buttons, keys, jump, speed, filter fields, labels."""

from types import SimpleNamespace

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QVBoxLayout, QWidget

from shardscope.backend.propagation.timeline import Step, Timeline
from shardscope.backend.session.playback import Playback
from shardscope.backend.sharding.values import ValueSharding
from shardscope.viewers.timeline.timeline_panel import TimelinePanel
from tests.support.paints import PaintLog, fresh, on_screen, wait_painted


def _vs(*dims):
    return ValueSharding(tuple(tuple(d) for d in dims), tuple(True for _ in dims))


def _graph():
    names = ["x", "sine %0", "cos %1", "y", "add %2"]
    values = [
        SimpleNamespace(id=i, display_name=n, name=n if i in (0, 3) else None)
        for i, n in enumerate(names)
    ]
    ops = [SimpleNamespace(scope=s) for s in ("a", "a/b", "c")]
    return SimpleNamespace(
        values=values,
        ops=ops,
        value_by_name=lambda n: next((v for v in values if v.name == n), None),
    )


def _playback():
    steps = [
        Step(0, 0, "stablehlo.sine", "data", "operand-0", ("result-0",), (1,), 0),
        Step(1, 1, "stablehlo.cosine", "data", "operand-0", ("result-0",), (2,), 1),
        Step(2, 2, "stablehlo.add", "data", "operand-0", ("result-0",), (4,), 2),
        Step(2, 2, "stablehlo.add", "model", "operand-1", ("result-0",), (4,), 3),
        Step(3, 2, "stablehlo.add", "model", "result-0", ("operand-0",), (2,), 4),
    ]
    initial = {0: _vs(["data"]), 3: _vs(["model"])}
    final = {
        0: _vs(["data"]),
        1: _vs(["data"]),
        2: _vs(["data", "model"]),
        3: _vs(["model"]),
        4: _vs(["data", "model"]),
    }
    return Playback(Timeline(steps, initial, final), _graph())


def _panel(qtbot, pb=None):
    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.show()
    pb = pb or _playback()
    panel.set_playback(pb, pb.graph, ("data", "model"))
    return panel, pb


def test_buttons_step_and_label_the_step(qtbot):
    panel, pb = _panel(qtbot)
    # at the final state the box and the label give the last step's number
    assert panel.step_label.text().startswith("Final state, after the last step (3).")
    assert panel.jump_box.value() == 3 and panel.count_label.text() == "/ 3"
    qtbot.mouseClick(panel.forward_button, Qt.MouseButton.LeftButton)
    assert pb.position == 0
    assert panel.step_label.text() == (
        "step 0: data across stablehlo.sine in a, operand-0 → result-0: sine %0"
    )
    qtbot.mouseClick(panel.end_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.back_button, Qt.MouseButton.LeftButton)
    assert pb.step_index == 2
    assert panel.step_label.text().count("\n") == 1  # two rows at one index
    assert panel.jump_box.value() == 2 and panel.count_label.text() == "/ 3"
    qtbot.mouseClick(panel.home_button, Qt.MouseButton.LeftButton)
    assert pb.position == 0
    qtbot.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    assert pb.playing and panel.play_button.text() == "❚❚"
    qtbot.mouseClick(panel.final_button, Qt.MouseButton.LeftButton)
    assert not pb.active and not pb.playing and panel.play_button.text() == "▶"


def test_many_rows_at_one_step_stay_on_two_lines(qtbot):
    panel, pb = _panel(qtbot)
    rows = [Step(0, None, "x", f"a{i}", "operand-0", ("result-0",), (1,)) for i in range(5)]
    many = Playback(Timeline(rows, {}, {1: _vs(["a0", "a1", "a2", "a3", "a4"])}))
    panel.set_playback(many, None, ())
    many.home()
    text = panel.step_label.text()
    assert text.count("\n") == 1 and "and 4 more rows" in text


def test_jump_speed_and_keys(qtbot):
    panel, pb = _panel(qtbot)
    panel.jump_box.setValue(3)
    panel.jump_box.editingFinished.emit()
    assert pb.step_index == 3
    panel.speed_combo.setCurrentIndex(panel.speed_combo.findData(60.0))
    panel.speed_combo.activated.emit(panel.speed_combo.currentIndex())
    assert pb.speed == 60.0
    pb.set_speed(2.0)
    assert panel.speed_combo.currentData() == 2.0
    panel.setFocus()
    for key, check in (
        (Qt.Key.Key_Home, lambda: pb.position == 0),
        (Qt.Key.Key_Right, lambda: pb.position == 1),
        (Qt.Key.Key_Left, lambda: pb.position == 0),
        (Qt.Key.Key_End, lambda: pb.at_end),
        (Qt.Key.Key_Space, lambda: pb.playing),
        (Qt.Key.Key_Escape, lambda: not pb.active),
    ):
        qtbot.keyClick(panel, key)
        assert check(), key


def test_filter_fields(qtbot):
    panel, pb = _panel(qtbot)
    panel.axis_combo.setCurrentIndex(panel.axis_combo.findData("model"))
    assert panel.apply_filter() == 2
    assert panel.filter_label.text() == "2 of 4 steps"
    panel.axis_combo.setCurrentIndex(0)
    panel.scope_box.setText("a/")
    assert panel.apply_filter() == 2 and pb.indices == [0, 1]
    panel.scope_box.clear()
    panel.tensor_box.setText("y")
    assert panel.apply_filter() == 1 and pb.indices == [2]
    panel.tensor_box.setText("cos %1")  # the name the graph shows an intermediate by
    assert panel.apply_filter() == 3
    rejected = []
    panel.filterRejected.connect(rejected.append)
    panel.tensor_box.setText("nope")
    assert panel.apply_filter() is None and "no tensor is named 'nope'" in rejected[0]
    panel.tensor_box.clear()
    assert panel.apply_filter() == 4 and panel.filter_label.text() == ""


def test_without_playback_everything_is_off(qtbot):
    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.set_playback(None, None, ())
    assert not panel.play_button.isEnabled() and panel.apply_filter() is None
    qtbot.keyClick(panel, Qt.Key.Key_Space)
    assert panel.jump_box.text() == "–" and panel.count_label.text() == ""
    empty = Playback(Timeline([], {}, {}))
    panel.set_playback(empty, None, ())
    assert panel.step_label.text().startswith("No propagation steps:")
    assert "Shard an input" in panel.step_label.text() and not panel.play_button.isEnabled()
    # no "step 0 / -1": nothing to number
    assert panel.jump_box.text() == "–" and panel.count_label.text() == ""
    assert "-1" not in panel.count_label.text() + panel.step_label.text()


def test_the_playing_speed_shows_only_with_steps_to_play_and_reads_right(qtbot):
    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_playback(None, None, ())
    qtbot.waitExposed(panel)
    # an empty window: no "1 steps/s" beside nothing to play
    assert not panel.speed_combo.isVisible()
    panel.set_playback(Playback(Timeline([], {}, {})), None, ())
    assert not panel.speed_combo.isVisible()
    pb = _playback()
    panel.set_playback(pb, pb.graph, ("data", "model"))
    assert panel.speed_combo.isVisible()
    texts = [panel.speed_combo.itemText(i) for i in range(panel.speed_combo.count())]
    assert texts[0] == "1 step/s" and texts[1] == "2 steps/s"
    assert "1 steps/s" not in texts
    # the user picks a speed from the list
    panel.speed_combo.setFocus()
    qtbot.keyClick(panel.speed_combo, Qt.Key.Key_Down)
    assert pb.speed == panel.speed_combo.currentData()


class _LayoutWatch(QObject):
    """Counts the layout requests that reach ``target``."""

    def __init__(self, target):
        super().__init__()
        self.target, self.count = target, 0

    def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
        if obj is self.target and event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def test_a_step_repaints_its_text_and_cursor_and_lays_nothing_out(qtbot):
    holder = QWidget()
    layout = QVBoxLayout(holder)
    panel = TimelinePanel()
    layout.addWidget(panel)
    qtbot.addWidget(holder)
    holder.resize(900, 200)
    holder.show()
    qtbot.waitExposed(holder)
    pb = _playback()
    panel.set_playback(pb, pb.graph, ("data", "model"))
    pb.seek(0)
    wait_painted(qtbot, holder)
    watch = _LayoutWatch(holder)
    holder.installEventFilter(watch)
    with PaintLog(holder) as log:
        pb.advance()
        qtbot.wait(50)
    assert panel.step_label.text().startswith("step 1: data across stablehlo.cosine")
    assert watch.count == 0  # the window around the dock is not laid out again
    # what changed: the label's text, the scrubber's cursor, the jump box
    painted = log.region()
    allowed = QRegion()
    for part in (panel.step_strip, panel.scrubber, panel.jump_box):
        allowed += QRect(part.mapTo(holder, QPoint(0, 0)), part.size())
    assert not painted.isEmpty() and painted.subtracted(allowed).isEmpty()
    assert log.area() < panel.width() * panel.height() / 4
    assert on_screen(holder) == fresh(holder)
    # the same step again: nothing to repaint
    log.clear()
    with PaintLog(holder) as log:
        pb.seek(pb.position)
        qtbot.wait(50)
    assert log.region(panel.step_strip).isEmpty()


def test_every_count_agrees_where_the_steps_are_numbered_with_gaps(qtbot):
    # Shardy numbers its steps; some numbers have no step (here 0, 2, 5)
    steps = [
        Step(0, 0, "stablehlo.sine", "data", "operand-0", ("result-0",), (1,), 0),
        Step(2, 1, "stablehlo.cosine", "data", "operand-0", ("result-0",), (2,), 1),
        Step(5, 2, "stablehlo.add", "model", "operand-1", ("result-0",), (4,), 3),
    ]
    final = {0: _vs(["data"]), 1: _vs(["data"]), 2: _vs(["data"]), 3: _vs(["model"])}
    final[4] = _vs(["model"])
    pb = Playback(Timeline(steps, {0: _vs(["data"]), 3: _vs(["model"])}, final), _graph())
    panel, pb = _panel(qtbot, pb)
    assert panel.jump_box.value() == 5 and panel.count_label.text() == "/ 5"
    assert "last step (5)" in panel.step_label.text()
    assert "steps" not in panel.step_label.text().split("\n")[0]  # no count to disagree with
    qtbot.mouseClick(panel.home_button, Qt.MouseButton.LeftButton)
    assert panel.jump_box.value() == 0 and panel.step_label.text().startswith("step 0:")
    qtbot.mouseClick(panel.forward_button, Qt.MouseButton.LeftButton)
    assert panel.jump_box.value() == 2 and panel.step_label.text().startswith("step 2:")
    # typing a number with no step goes to the next step there is
    panel.jump_box.lineEdit().selectAll()
    qtbot.keyClicks(panel.jump_box.lineEdit(), "3")
    qtbot.keyClick(panel.jump_box.lineEdit(), Qt.Key.Key_Return)
    assert pb.step_index == 5 and panel.jump_box.value() == 5
    qtbot.mouseClick(panel.end_button, Qt.MouseButton.LeftButton)
    assert panel.step_label.text().startswith("step 5:")
    qtbot.mouseClick(panel.final_button, Qt.MouseButton.LeftButton)
    assert panel.jump_box.value() == 5 and "last step (5)" in panel.step_label.text()
    # the filter counts steps as the label would, one or many
    panel.axis_combo.setCurrentIndex(panel.axis_combo.findData("model"))
    assert panel.apply_filter() == 1 and panel.filter_label.text() == "1 of 3 steps"
    one = Playback(Timeline(steps[:1], {0: _vs(["data"])}, {0: final[0], 1: final[1]}), _graph())
    panel.set_playback(one, one.graph, ("data", "model"))
    panel.axis_combo.setCurrentIndex(panel.axis_combo.findData("data"))
    assert panel.apply_filter() == 1 and panel.filter_label.text() == "1 of 1 step"
    assert panel.jump_box.value() == 0 and panel.count_label.text() == "/ 0"
