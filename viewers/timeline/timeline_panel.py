"""The timeline dock's widget: playback controls, the scrubber, jump, speed and a filter.

``TimelinePanel`` drives a backend ``Playback`` (a state machine of where the user is
among the steps; it holds no document data) and redraws from its events. Playing needs a
clock: the panel emits nothing for that, the window's timer ticks the playback. Keys
while the panel has focus: space plays or pauses, Left/Right step, Home/End jump to the
first and last step, Escape shows the final state (on the graph view too, while a step
is shown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.session.playback import SPEEDS, StepFilter
from shardscope.viewers.common.damage import quiet_change
from shardscope.viewers.timeline.scrubber import Scrubber

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph
    from shardscope.backend.session.playback import Playback, PlaybackEvent

ALL_AXES = "all axes"
NO_PROPAGATION = "No propagation yet: press F5 or edit a spec."
NO_STEPS = (
    "No propagation steps: no axis moved from one tensor to another. Shard an input "
    "(drag a mesh axis onto it) so that axes flow."
)
# Characters of one line of the step label (the tooltip has it whole).
MAX_LINE = 110


# Keys that step the playback wherever they work (the dock, the graph view) ...
STEP_KEYS = {
    Qt.Key.Key_Space: "toggle",
    Qt.Key.Key_Left: "back",
    Qt.Key.Key_Right: "advance",
    Qt.Key.Key_Home: "home",
    Qt.Key.Key_End: "end",
}
# ... and Escape leaves step mode (back to the final state): in the dock, and in the
# graph view while a step is shown.
PANEL_KEYS = {**STEP_KEYS, Qt.Key.Key_Escape: "reset"}
VIEW_STEPPING_KEYS = PANEL_KEYS
# What each of those does, as the buttons' tips and the shortcuts list say it.
KEY_ACTIONS = {
    "toggle": "Play / pause",
    "back": "Step back",
    "advance": "Step forward",
    "home": "First step",
    "end": "Last step",
    "reset": "Final state (leave step mode)",
}


def key_name(action: str) -> str:
    """The key bound to timeline ``action`` (``Space``, ``End``, ``Esc``)."""
    (key,) = [k for k, a in PANEL_KEYS.items() if a == action]
    return QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText)


def key_rows() -> list[tuple[str, str, str]]:
    """(keys, action, where) for every key the timeline binds, from the bindings above."""
    rows = []
    for key, action in PANEL_KEYS.items():
        where = (
            "Timeline dock and graph"
            if key in STEP_KEYS
            else "Timeline dock and graph (while stepping)"
        )
        rows.append((key_name(action), f"Timeline: {KEY_ACTIONS[action].lower()}", where))
    return rows


def steps_text(count: int) -> str:
    """``1 step``, ``5 steps``."""
    return f"{count} step" if count == 1 else f"{count} steps"


class _StepLabel(QLabel):
    """A label that sizes itself to its text inside a strip with no layout: a new text
    repaints the old and new text's rects only, and never asks the dock (nor the window
    around it) to lay itself out again."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        if text == self.text():
            return
        with quiet_change(self.parentWidget()):
            super().setText(text)
            self.fit()

    def fit(self) -> None:
        strip = self.parentWidget()
        width = min(self.sizeHint().width(), strip.width())
        self.setGeometry(0, 0, width, strip.height())


class _LabelStrip(QWidget):
    """Room for ``lines`` lines of text as wide as the dock; holds one ``_StepLabel``."""

    def __init__(self, text: str, lines: int, parent: QWidget) -> None:
        super().__init__(parent)
        self.label = _StepLabel(text, self)
        self.setFixedHeight(self.label.fontMetrics().lineSpacing() * lines + 4)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.label.fit()


def _key_tip(action: str) -> str:
    return f"{KEY_ACTIONS[action]} ({key_name(action)})"


class TimelinePanel(QWidget):
    """See the module docstring. ``filterRejected(message)`` when a filter names no tensor."""

    filterRejected = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.playback: Playback | None = None
        self.graph: ProgramGraph | None = None
        self.axis_names: tuple[str, ...] = ()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._make_step_buttons()
        self._make_step_controls()
        self._make_step_display()
        self._make_filters()
        self._lay_out()
        self._enable(False)

    def _button(self, text: str, tip: str, slot) -> QToolButton:
        b = QToolButton(self)
        b.setText(text)
        b.setToolTip(tip)
        b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        b.clicked.connect(slot)
        return b

    def _make_step_buttons(self) -> None:
        """Buttons that step, play and leave step mode; tips name their keys."""
        button = self._button
        tip = _key_tip
        self.home_button = button("|◀◀", tip("home"), lambda: self._do("home"))
        self.back_button = button("◀|", tip("back"), lambda: self._do("back"))
        self.play_button = button("▶", tip("toggle"), lambda: self._do("toggle"))
        self.forward_button = button("|▶", tip("advance"), lambda: self._do("advance"))
        self.end_button = button("▶▶|", tip("end"), lambda: self._do("end"))
        self.final_button = QPushButton("Final state", self)
        self.final_button.setToolTip(
            f"Leave step mode: show the shardings after propagation ({key_name('reset')})"
        )
        self.final_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.final_button.clicked.connect(lambda: self._do("reset"))

    def _make_step_controls(self) -> None:
        """The playing speed, the step to jump to and the step count."""
        self.speed_combo = QComboBox(self)
        for s in SPEEDS:
            self.speed_combo.addItem(f"{s:g} {'step' if s == 1 else 'steps'}/s", s)
        self.speed_combo.setToolTip("Playing speed")
        # hidden while there is nothing to play, keeping its room: showing it then lays
        # nothing out again
        policy = self.speed_combo.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.speed_combo.setSizePolicy(policy)
        self.speed_combo.activated.connect(self._on_speed)
        self.jump_box = QSpinBox(self)
        self.jump_box.setToolTip("Jump to step (Enter)")
        self.jump_box.setKeyboardTracking(False)
        self.jump_box.editingFinished.connect(self._on_jump)
        # Fixed, sized for six digits: a new range or value must not lay the dock out again
        self.jump_box.setRange(0, 999_999)
        self.jump_box.setFixedSize(self.jump_box.sizeHint())
        self.jump_box.setRange(0, 0)
        self.count_label = QLabel("", self)

    def _make_step_display(self) -> None:
        """The scrubber and the two lines that describe the current step."""
        self.scrubber = Scrubber(self)
        self.scrubber.seekRequested.connect(self._on_seek)
        # Two lines always, as wide as its text: each step repaints only the text, not
        # the dock (what a forwarded X11 display pays for).
        self.step_strip = _LabelStrip(NO_PROPAGATION, 2, self)
        self.step_label = self.step_strip.label
        self.step_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.step_label.setWordWrap(False)

    def _make_filters(self) -> None:
        """The axis, tensor and scope filters of the steps shown."""
        self.axis_combo = QComboBox(self)
        self.axis_combo.addItem(ALL_AXES, None)
        self.axis_combo.setToolTip("Only steps that move this axis")
        self.axis_combo.activated.connect(lambda _i: self.apply_filter())
        self.tensor_box = QLineEdit(self)
        self.tensor_box.setPlaceholderText("tensor name")
        self.tensor_box.setToolTip("Only steps that reach or leave this tensor (Enter)")
        self.tensor_box.setClearButtonEnabled(True)
        self.tensor_box.returnPressed.connect(self.apply_filter)
        self.scope_box = QLineEdit(self)
        self.scope_box.setPlaceholderText("scope, e.g. layer3/attn")
        self.scope_box.setToolTip("Only steps on ops inside this name scope (Enter)")
        self.scope_box.setClearButtonEnabled(True)
        self.scope_box.returnPressed.connect(self.apply_filter)
        self.filter_label = QLabel("", self)

    def _lay_out(self) -> None:
        """Controls above the scrubber, the step's lines below it, the filters last."""
        self.step_buttons = (
            self.home_button,
            self.back_button,
            self.play_button,
            self.forward_button,
            self.end_button,
            self.final_button,
        )
        controls = QHBoxLayout()
        for w in self.step_buttons:
            controls.addWidget(w)
        controls.addSpacing(8)
        controls.addWidget(QLabel("step", self))
        controls.addWidget(self.jump_box)
        controls.addWidget(self.count_label)
        controls.addStretch(1)
        controls.addWidget(self.speed_combo)
        filters = QHBoxLayout()
        filters.addWidget(QLabel("filter", self))
        filters.addWidget(self.axis_combo)
        filters.addWidget(self.tensor_box, 1)
        filters.addWidget(self.scope_box, 1)
        filters.addWidget(self.filter_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addLayout(controls)
        layout.addWidget(self.scrubber)
        layout.addWidget(self.step_strip)
        layout.addLayout(filters)

    # -- model ----------------------------------------------------------------------------
    def set_playback(
        self,
        playback: Playback | None,
        graph: ProgramGraph | None,
        axis_names: tuple[str, ...],
        note: str = "",
    ) -> None:
        """Control ``playback`` (None: no propagation result); ``note`` heads the label."""
        if self.playback is not None:
            self.playback.unlisten(self._on_event)
        self.playback, self.graph, self.axis_names = playback, graph, axis_names
        self.note = note
        self.axis_combo.clear()
        self.axis_combo.addItem(ALL_AXES, None)
        for name in axis_names:
            self.axis_combo.addItem(name, name)
        self.tensor_box.clear()
        self.scope_box.clear()
        self.filter_label.setText("")
        if playback is not None:
            playback.listen(self._on_event)
            self._select_speed(playback.speed)
        self._enable(playback is not None and len(playback) > 0)
        self.scrubber.set_playback(playback, axis_names)
        self._show_position()

    def _enable(self, on: bool) -> None:
        for w in (*self.step_buttons, self.jump_box, self.scrubber):
            w.setEnabled(on)
        # no playing speed where there is nothing to play
        self.speed_combo.setVisible(on)

    def _select_speed(self, speed: float) -> None:
        i = self.speed_combo.findData(speed)
        if i >= 0:
            self.speed_combo.setCurrentIndex(i)

    def _on_event(self, event: PlaybackEvent) -> None:
        if event.kind == "filter":
            self.scrubber.set_playback(self.playback, self.axis_names)
            self._enable(len(self.playback) > 0)
        elif event.kind == "speed":
            self._select_speed(self.playback.speed)
        self.scrubber.position_changed()
        self._show_position()

    def _show_position(self) -> None:
        pb = self.playback
        self.play_button.setText("❚❚" if pb is not None and pb.playing else "▶")
        head = f"{self.note} · " if pb is not None and self.note else ""
        box = self.jump_box
        box.blockSignals(True)
        if pb is None or not pb.all_indices:
            # nothing to number: the box shows a dash, not a step 0 that does not exist
            box.setRange(0, 0)
            box.setSpecialValueText("–")
            box.setValue(0)
            box.blockSignals(False)
            self.count_label.setText("")
            text = NO_PROPAGATION if pb is None else NO_STEPS
            self.step_label.setText(head + text)
            self.step_label.setToolTip(text)
            return
        # A step's number is its timeline index (as its description, Provenance and
        # ``render --step`` give it); the final state is what the last step left.
        first, last = pb.all_indices[0], pb.all_indices[-1]
        box.setSpecialValueText("")
        if (box.minimum(), box.maximum()) != (first, last):
            box.setRange(first, last)
        shown = last if pb.step_index is None else pb.step_index
        if box.value() != shown:
            box.setValue(shown)
        box.blockSignals(False)
        self.count_label.setText(f"/ {last}")
        if pb.step_index is None:
            self.step_label.setText(
                head + f"Final state, after the last step ({last}).\nPress play (space) "
                "to watch propagation from the start."
            )
            self.step_label.setToolTip("")
        else:
            self.step_label.setText(head + self.describe(pb))
            self.step_label.setToolTip(self.describe(pb, max_lines=50, max_line=10_000))

    def describe(self, pb: Playback, max_lines: int = 2, max_line: int = MAX_LINE) -> str:
        """One line per row of the current step (at most ``max_lines``)."""
        lines = []
        graph = self.graph
        for s in pb.steps():
            names = []
            for v in s.values[:3]:
                names.append(graph.values[v].display_name if graph is not None else str(v))
            more = f" +{len(s.values) - 3}" if len(s.values) > 3 else ""
            where = ""
            if s.op is not None and graph is not None and graph.ops[s.op].scope:
                where = f" in {graph.ops[s.op].scope}"
            unrec = " (not recorded by Shardy)" if not s.recorded else ""
            line = (
                f"step {s.index}: {s.axis} across {s.op_name}{where}, "
                f"{s.source} → {', '.join(s.targets)}: {', '.join(names)}{more}{unrec}"
            )
            lines.append(line if len(line) <= max_line else line[: max_line - 1] + "…")
        if len(lines) > max_lines:
            rest = len(lines) - max_lines + 1
            lines = lines[: max_lines - 1] + [f"… and {rest} more rows at this step"]
        return "\n".join(lines)

    # -- user actions -----------------------------------------------------------------------
    def _do(self, action: str) -> None:
        pb = self.playback
        if pb is None:
            return
        getattr(pb, action)()

    def _on_seek(self, position: int) -> None:
        if self.playback is not None:
            self.playback.seek(position)

    def _on_jump(self) -> None:
        if self.playback is not None and len(self.playback):
            self.playback.seek_step(self.jump_box.value())

    def _on_speed(self, index: int) -> None:
        if self.playback is not None:
            self.playback.set_speed(float(self.speed_combo.itemData(index)))

    def apply_filter(self) -> int | None:
        """Filter by the axis, tensor and scope fields; None if the tensor is unknown."""
        pb = self.playback
        if pb is None:
            return None
        value = None
        name = self.tensor_box.text().strip()
        if name:
            value = self._find_value(name)
            if value is None:
                self.filter_label.setText("no such tensor")
                self.filterRejected.emit(
                    f"timeline filter: no tensor is named {name!r}; give a name as the "
                    "graph shows it (an argument, result[0], or block/add %3)"
                )
                return None
        scope = self.scope_box.text().strip().strip("/") or None
        f = StepFilter(self.axis_combo.currentData(), value, scope)
        count = pb.set_filter(f)
        total = len(pb.all_indices)
        self.filter_label.setText("" if f.empty else f"{count} of {steps_text(total)}")
        return count

    def _find_value(self, name: str) -> int | None:
        graph = self.graph
        if graph is None:
            return None
        v = graph.value_by_name(name)
        if v is not None:
            return v.id
        for value in graph.values:
            if value.display_name == name:
                return value.id
        return None

    def step_key(self, event, keys: dict | None = None) -> bool:
        """Do what key ``event`` asks of the playback (``keys``: which keys, default
        ``PANEL_KEYS``); whether it did. Keys with Ctrl, Alt or Meta are left
        to others."""
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if mods & ~Qt.KeyboardModifier.ShiftModifier or self.playback is None:
            return False
        action = (PANEL_KEYS if keys is None else keys).get(event.key())
        if action is None:
            return False
        self._do(action)
        return True

    def keyPressEvent(self, event) -> None:
        if self.step_key(event):
            event.accept()
            return
        super().keyPressEvent(event)
