"""The options of File > Export propagation animation, as ``render --animate`` takes them.

``ExportDialog`` asks what to draw (the whole graph as the view shows it, the region the
view shows, or one scope, fully unfolded; by default the scope of the selected box, else
the whole graph), how wide the frames are (by default the narrowest at which labels are
9 px high) and the format (GIF, or MP4 where PyAV is installed). Each change plans the
export on a view of its own off screen (``viewers.graph.movie.plan_movie``) and shows the
frame count, the frame size, the labels' height and the estimated file size, or why it
cannot be written (labels under 9 px, frames too large), in which case OK is disabled.
The view of the last plan goes to the export with the answer (``take``), so the export
does not lay the graph out again.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.natural_order import natural_key
from shardscope.backend.program.layout import FrameIndex, all_scopes
from shardscope.backend.session.playback import Playback
from shardscope.viewers.graph.items import NodeItem
from shardscope.viewers.graph.markers import GraphMarkers
from shardscope.viewers.graph.movie import MAX_SIDE, MoviePlan, plan_movie
from shardscope.viewers.graph.video import have_av
from shardscope.viewers.graph.view import GraphView

WHOLE, REGION, SCOPE = "whole", "region", "scope"


@dataclass
class ExportChoice:
    """What the user chose: ``what`` (whole, region or scope), the scope, the region (scene
    units), the frame width, the suffix, and the plan with the view it was made on."""

    what: str
    scope: str | None
    region: QRectF | None
    width: int
    suffix: str
    plan: MoviePlan
    view: GraphView
    markers: GraphMarkers


def _natural(path: str) -> list:
    """A scope path's key in the picker: a tree's order, each level natural."""
    return [natural_key(part) for part in path.split("/")]


def selected_scope(view: GraphView) -> str | None:
    """The scope of the box selected on ``view`` (a folded scope, or an op's), if any."""
    for item in view.scene().selectedItems():
        if isinstance(item, NodeItem) and item.node.scope:
            return item.node.scope
    return None


def visible_region(view: GraphView) -> QRectF:
    """The part of the scene ``view`` shows on screen."""
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    return shown.intersected(view.scene().sceneRect())


def drawing_view(
    window: QMainWindow, like: GraphView, scope: str | None
) -> tuple[GraphView, GraphMarkers]:
    """A view of the window's session of its own, and its markers, for an export to plan
    and draw on: in the window's theme, showing what ``like`` shows, or ``scope``
    unfolded."""
    view = GraphView(window.session, restore=False, navigation=like.navigation.copy())
    view.set_style_theme(window.theme)
    view.follow_navigation(fit=True)
    if scope:
        view.show_scope(scope)
    return view, GraphMarkers(view)


def close_drawing_view(view: GraphView, markers: GraphMarkers | None) -> None:
    """Close a ``drawing_view`` and its markers."""
    if markers is not None:
        markers.close()
    view.close()
    view.deleteLater()


class ExportDialog(QDialog):
    """See the module docstring. ``window``: the main window (its session and graph)."""

    def __init__(self, window: QMainWindow, playback: Playback) -> None:
        super().__init__(window)
        self.setWindowTitle("Export propagation animation")
        self.window_ = window
        self.playback = playback
        graph = window.graph
        self._source_view = graph
        self.region = visible_region(graph)
        session = window.session
        scopes = all_scopes(session.graph, FrameIndex(session.graph), graph.frame)
        self.scopes = sorted(scopes, key=_natural)
        self._view: GraphView | None = None
        self._markers: GraphMarkers | None = None
        self._view_key: tuple | None = None
        self._width_edited = False
        self.plan: MoviePlan | None = None
        self._make_what(selected_scope(graph))
        self._make_output()
        self._lay_out()
        self.group.buttonToggled.connect(self._on_what)
        self.scope_box.currentIndexChanged.connect(self._on_scope)
        self.width_box.valueChanged.connect(self._on_width)
        self.format_box.currentIndexChanged.connect(lambda _i: self.replan())
        self.replan(fit_width=True)

    def _make_what(self, chosen: str | None) -> None:
        """The choice of what to draw: the whole graph, the visible region or one scope
        (``chosen``, when it is one of the frame's)."""
        self.whole_button = QRadioButton("Whole graph, as the view shows it", self)
        self.region_button = QRadioButton("Visible region", self)
        self.scope_button = QRadioButton("Scope, unfolded:", self)
        self.scope_box = QComboBox(self)
        self.scope_box.addItems(self.scopes)
        self.scope_box.setMinimumContentsLength(24)
        self.group = QButtonGroup(self)
        for button in (self.whole_button, self.region_button, self.scope_button):
            self.group.addButton(button)
        if not self.scopes:
            self.scope_button.setEnabled(False)
            self.scope_box.setEnabled(False)
        if chosen in self.scopes:
            self.scope_button.setChecked(True)
            self.scope_box.setCurrentText(chosen)
        else:
            self.whole_button.setChecked(True)

    def _make_output(self) -> None:
        """The width and format of the animation, what it will take, and the buttons."""
        self.width_box = QSpinBox(self)
        self.width_box.setRange(100, MAX_SIDE)
        self.width_box.setSuffix(" px")
        self.width_box.setSingleStep(100)
        self.format_box = QComboBox(self)
        self.format_box.addItem("GIF", ".gif")
        self.format_box.addItem("MP4 video (H.264)", ".mp4")
        if not have_av():
            item = self.format_box.model().item(1)
            item.setEnabled(False)
            item.setToolTip("MP4 needs PyAV: pip install 'shardscope[video]'")
        self.info = QLabel(self)
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

    def _lay_out(self) -> None:
        """The choices in a form above what the animation will take and the buttons."""
        what = QVBoxLayout()
        what.addWidget(self.whole_button)
        what.addWidget(self.region_button)
        row = QHBoxLayout()
        row.addWidget(self.scope_button)
        row.addWidget(self.scope_box, 1)
        what.addLayout(row)
        holder = QWidget(self)
        holder.setLayout(what)
        form = QFormLayout()
        form.addRow("Draw", holder)
        form.addRow("Width", self.width_box)
        form.addRow("Format", self.format_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.info)
        layout.addWidget(self.buttons)

    # -- the answer -----------------------------------------------------------------------
    @property
    def what(self) -> str:
        if self.scope_button.isChecked():
            return SCOPE
        return REGION if self.region_button.isChecked() else WHOLE

    @property
    def ok_button(self):
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def take(self) -> ExportChoice:
        """The answer, with the view its plan was made on (the caller closes it)."""
        view, markers = self._view, self._markers
        self._view = self._markers = self._view_key = None
        return ExportChoice(
            self.what,
            self.scope_box.currentText() if self.what == SCOPE else None,
            self.region if self.what == REGION else None,
            self.width_box.value(),
            self.format_box.currentData(),
            self.plan,
            view,
            markers,
        )

    # -- planning -------------------------------------------------------------------------
    def _on_what(self, _button, checked: bool) -> None:
        if checked:
            self.replan(fit_width=not self._width_edited)

    def _on_scope(self, _index: int) -> None:
        if self.scope_button.isChecked():
            self.replan(fit_width=not self._width_edited)
        else:
            self.scope_button.setChecked(True)

    def _on_width(self, _value: int) -> None:
        self._width_edited = True
        self.replan()

    def _planning_view(self) -> GraphView:
        key = (self.what == SCOPE, self.scope_box.currentText() if self.what == SCOPE else None)
        if self._view is not None and self._view_key == key:
            return self._view
        self._close_view()
        view, self._markers = drawing_view(self.window_, self._source_view, key[1])
        self._view, self._view_key = view, key
        return view

    def replan(self, *, fit_width: bool = False) -> None:
        """Plan the export as the dialog stands and show the plan (``fit_width``: first
        set the width to the narrowest with legible labels)."""
        view = self._planning_view()
        source = self.region if self.what == REGION else None
        suffix = self.format_box.currentData()
        name = "animation" + suffix
        try:
            if fit_width:
                plan = plan_movie(view, self.playback, name, source=source)
                self.width_box.blockSignals(True)
                self.width_box.setValue(min(plan.width, MAX_SIDE))
                self.width_box.blockSignals(False)
            plan = plan_movie(
                view, self.playback, name, source=source, width=self.width_box.value()
            )
        except ValueError as exc:
            self.plan = None
            self._show(f"cannot export: {exc}", problem=True)
            return
        self.plan = plan
        if plan.problem:
            self._show(f"Cannot export: {plan.problem}.", problem=True)
        elif not plan.positions:
            self._show("No propagation step changes what is drawn: draw more of the graph.", True)
        else:
            self._show(plan.summary(), problem=False)

    def _show(self, text: str, problem: bool) -> None:
        self.info.setText(text)
        self.info.setStyleSheet("color: #C62828;" if problem else "")
        self.ok_button.setEnabled(not problem)

    def _close_view(self) -> None:
        if self._view is not None:
            close_drawing_view(self._view, self._markers)
        self._view = self._markers = self._view_key = None

    def accept(self) -> None:
        if not self.ok_button.isEnabled():  # a plan that cannot be written
            return
        super().accept()

    def done(self, result: int) -> None:
        if result != QDialog.DialogCode.Accepted:
            self._close_view()
        super().done(result)
