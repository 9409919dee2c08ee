"""The window's side of the timeline: a Playback per propagation result, ticked by a timer.

``TimelineController`` makes a backend ``Playback`` for each propagation result, hands it
to the timeline dock, and turns its events into what the window shows: every badge at the
step (``StepOverlay``), the step's edges and op, and the selected tensor in the inspector
(through ``refresh_inspector(changed)``: the values whose sharding changed, None for
all). While playing, a ``QTimer`` ticks the playback with the
time that went by. The timeline's keys (space, arrows, Home/End) work on the graph view
as in the dock. After an edit it rings the badges whose sharding the new propagation
changed, and the timeline waits at its start. It also answers provenance questions for
the Provenance dock, in the time frame the Tensor dock shows: at the step shown (what
propagation had found by then, once the user stays on it for a moment), or the final
state; while playing it keeps the step playing started from (its header says so) until
a pause.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QTimer, Signal

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.propagation.provenance import Provenance
from shardscope.backend.propagation.result import PropagationResult
from shardscope.backend.session.document import Session
from shardscope.backend.session.playback import Playback, PlaybackEvent
from shardscope.backend.sharding.spec import Spec
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.graph.step_overlay import StepOverlay, playback_override
from shardscope.viewers.graph.view import GraphView
from shardscope.viewers.timeline.provenance_view import HINT, ProvenanceView
from shardscope.viewers.timeline.timeline_panel import (
    STEP_KEYS,
    VIEW_STEPPING_KEYS,
    TimelinePanel,
)

# Fastest timer period: one repaint per display frame is all the eye gets.
MIN_TICK_MS = 16
# How long the user stays on a step before Provenance explains it.
PROVENANCE_DELAY_MS = 150


class TimelineController(QObject):
    """See the module docstring. ``stepShown(index)`` tells the step index the window
    shows (-1: none, the final state)."""

    stepShown = Signal(int)

    def __init__(
        self,
        session: Session,
        view: GraphView,
        panel: TimelinePanel,
        provenance: ProvenanceView,
        refresh_inspector: Callable[[frozenset[int] | None], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.view = view
        self.panel = panel
        self.provenance_view = provenance
        self.refresh_inspector = refresh_inspector
        self.overlay = StepOverlay(view)
        self.playback: Playback | None = None
        self.provenance: Provenance | None = None
        self.changed: frozenset[int] = frozenset()
        # The final shardings of the propagation before the last edit's (None when the
        # current result follows no edit).
        self.before_edit: dict[int, list[list[str]]] | None = None
        # and that propagation itself with its compile (its conflicts and collectives),
        # kept as long
        self.before_result: Analysis | None = None
        self.edited: tuple[int, ...] = ()
        self._edit_pending = False
        self._previous: dict[int, list[list[str]]] | None = None
        self._previous_before: dict[int, list[list[str]]] | None = None
        # The current propagation with its compile once that came.
        self._latest: Analysis | None = None
        self._override = None
        self.selected: tuple[int, int | None] | None = None
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)
        self._clock = QElapsedTimer()
        self._provenance_timer = QTimer(self)
        self._provenance_timer.setSingleShot(True)
        self._provenance_timer.setInterval(PROVENANCE_DELAY_MS)
        self._provenance_timer.timeout.connect(self._show_provenance)
        ev = session.events
        self._links = Connections()
        self._links.connect(ev.program, self._on_program)
        self._links.connect(ev.specs, self._on_specs)
        self._links.connect(ev.mesh, self._on_mesh)
        self._links.connect(ev.propagation, self._on_propagation)
        self._links.connect(ev.compiled, self._on_compiled)
        provenance.stepClicked.connect(self.seek_step)
        provenance.dimClicked.connect(self._on_dim_link)
        # the timeline's keys work on the graph view too, while there is a timeline (else
        # the arrows and Home/End scroll the view as usual)
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if (
            watched is self.view
            and event.type() == QEvent.Type.KeyPress
            and self.panel.step_key(event, self._view_keys())
        ):
            return True
        return super().eventFilter(watched, event)

    def _view_keys(self) -> dict:
        """The timeline's keys on the graph view: the step keys, and while a step is
        shown Escape, which leaves step mode (else Escape is the view's own)."""
        playback = self.panel.playback
        if playback is not None and playback.active:
            return VIEW_STEPPING_KEYS
        return STEP_KEYS

    def close(self) -> None:
        self.timer.stop()
        self._provenance_timer.stop()
        self.view.removeEventFilter(self)
        self._links.close()
        self.overlay.close()

    # -- session events ------------------------------------------------------------------
    def _on_program(self, _program) -> None:
        self._previous = None
        self._latest = None
        self.before_edit = None
        self.before_result = None
        self._edit_pending = False
        self.edited = ()
        self.selected = None
        self.provenance_view.show_message(HINT)

    def _on_specs(self, ids) -> None:
        self._edit_pending = True
        self.edited = tuple(ids)

    def _on_mesh(self, _mesh) -> None:
        self._edit_pending = True
        self.edited = ()

    def _on_compiled(self, analysis: Analysis) -> None:
        if self._latest is not None and analysis.propagation is self._latest.propagation:
            self._latest = analysis

    def _on_propagation(self, result: PropagationResult | None) -> None:
        self._detach()
        if result is None:
            self.before_edit = None
            self.before_result = None
            self.panel.set_playback(None, self.session.graph, ())
            self.overlay.set_changed(())
            self._show_provenance()
            return
        current = {v.id: v.spec for v in result.values}
        changed: set[int] = set()
        # the first result of a program follows no edit: the program's own specs
        self._previous_before = self._previous
        previous_result, self._latest = self._latest, Analysis(result)
        if self._edit_pending and self._previous is not None:
            changed = {v for v, spec in current.items() if self._previous.get(v) != spec}
        self._previous = current
        self.changed = frozenset(changed)
        followed_edit = self._edit_pending and self._previous_before is not None
        self.before_edit = self._previous_before if followed_edit else None
        self.before_result = previous_result if followed_edit else None
        note = ""
        if self._edit_pending and self._previous_before is not None:
            graph = self.session.graph
            names = ", ".join(graph.values[v].display_name for v in self.edited[:3])
            what = f"after editing {names}" if names else "after the edit"
            note = f"{what}: {len(changed)} tensor{'s' if len(changed) != 1 else ''} changed"
        self._edit_pending = False
        self.playback = Playback(result.timeline, result.graph)
        self.playback.listen(self._on_event)
        self._override = playback_override(self.playback, self.session.specs)
        self.provenance = Provenance(
            result.timeline,
            annotations=result.annotations,
            conflicts=result.conflicts,
            graph=result.graph,
        )
        mesh = self.session.mesh
        self.panel.set_playback(
            self.playback, result.graph, mesh.axis_names if mesh is not None else (), note
        )
        self.overlay.set_changed(changed)
        self._show_provenance()

    def _detach(self) -> None:
        self.timer.stop()
        self._provenance_timer.stop()
        if self.playback is not None:
            self.playback.unlisten(self._on_event)
            was_active = self.playback.active
            self.playback = None
            self.provenance = None
            self.overlay.show_steps([])
            self.overlay.set_spec_override(None, None if was_active else ())
            if was_active:
                self.refresh_inspector(None)

    # -- playback events -------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether a step is shown (else the final state)."""
        return self.playback is not None and self.playback.active

    def _on_event(self, event: PlaybackEvent) -> None:
        pb = self.playback
        if event.kind == "playing" or event.kind == "finished":
            if pb.playing:
                self._start_timer()
            else:
                self.timer.stop()
        elif event.kind == "speed" and pb.playing:
            self._start_timer()
        if event.kind in ("playing", "finished"):
            self._provenance_timer.stop()
            self._show_provenance()
        if event.kind not in ("position", "filter"):
            return
        self.overlay.set_spec_override(self._override if pb.active else None, event.changed)
        self.overlay.show_steps(pb.steps() if pb.active else [])
        self.stepShown.emit(pb.step_index if pb.active else -1)
        if not pb.playing:
            # follow a step the user moved to; while playing, scrolling every step would
            # repaint the whole view each time (too slow over a forwarded display)
            self.overlay.reveal()
            # Provenance explains the step shown once the user stops moving (while
            # playing it waits for a pause): its text is read, not watched
            self._provenance_timer.start()
        if event.changed:
            self.refresh_inspector(event.changed)

    def spec_at(self, vid: int) -> Spec | None:
        """The sharding of ``vid`` at the current step (None when not stepping)."""
        if not self.active:
            return None
        state = self.playback.value_at(vid)
        if state is None:
            return None
        return Spec.of(*[d if d else None for d in state.dims])

    # -- the clock --------------------------------------------------------------------------
    def _start_timer(self) -> None:
        pb = self.playback
        period = max(MIN_TICK_MS, int(1000 / pb.speed))
        self._clock.start()
        self.timer.start(period)

    def _tick(self) -> None:
        pb = self.playback
        if pb is None or not pb.playing:
            self.timer.stop()
            return
        seconds = self._clock.restart() / 1000.0
        pb.tick(seconds)

    # -- actions ------------------------------------------------------------------------------
    def seek_step(self, index: int) -> None:
        """Show timeline step ``index`` (clearing a filter that hides it)."""
        pb = self.playback
        if pb is None:
            return
        if index not in pb.indices and index in pb.all_indices:
            self.panel.tensor_box.clear()
            self.panel.scope_box.clear()
            self.panel.axis_combo.setCurrentIndex(0)
            self.panel.apply_filter()
        pb.pause()
        pb.seek_step(index)

    def select(self, value_id: int | None, dim: int | None = None) -> None:
        """The tensor (and dimension) the Provenance dock explains."""
        self.selected = None if value_id is None else (int(value_id), dim)
        self._provenance_timer.stop()
        self._show_provenance()

    def _on_dim_link(self, dim: int) -> None:
        """A dimension's link in the Provenance dock: its chain (-1: every dimension)."""
        if self.selected is not None:
            self.select(self.selected[0], None if dim < 0 else dim)

    def _show_provenance(self) -> None:
        view = self.provenance_view
        graph = self.session.graph
        if self.selected is None or graph is None:
            view.show_message(HINT)
            return
        vid, dim = self.selected
        value = graph.values[vid]
        if self.provenance is None:
            view.show_message(
                f"{value.display_name}: propagate (F5) to see where its shardings come from."
            )
            return
        if not value.rank:
            view.show_message(f"{value.display_name} has no dimension to shard.")
            return
        pb = self.playback
        dims = range(value.rank) if dim is None else [dim]
        records = [self.provenance.dim(vid, d) for d in dims if d < value.rank]
        mesh = self.session.mesh
        at = pb.step_index if pb is not None else None
        view.set_records(
            value.display_name,
            records,
            lambda v: graph.values[v].display_name,
            mesh.axis_names if mesh is not None else (),
            at_step=at,
            last_step=pb.all_indices[-1] if pb is not None and pb.all_indices else None,
            playing=pb is not None and pb.playing,
            summary=dim is None,
            chosen=dim is not None,
        )
