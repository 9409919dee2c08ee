"""Drawings of large frames built in slices, so the window stays responsive.

``SlicedDrawing`` is the part of ``GraphView`` that shows a new expansion state of a large
frame without holding the GUI thread: the layout is computed by the view's ``runner`` (off
the GUI thread), the items are made and put in the scene a slice at a time between turns
of the event loop, the old drawing stays on screen until the new one is whole, and the job
is dropped if the user changes what the view shows meanwhile or cancels it.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QTimer

from shardscope.backend.program.layout import Frame, GraphLayout, build_layout, default_expanded
from shardscope.viewers.graph.staging import StagedDrawing

# Work done on the GUI thread between two turns of the event loop while a large drawing
# is built in slices.
SLICE_S = 0.03
# Adding items to the scene costs Qt as much again in the same turn, after the slice.
SHOW_SLICE_S = 0.01
# Frames with fewer ops than this are drawn at once (in well under a tenth of a second).
SLICE_OPS = 1500

# ``runner(fn, on_done(result, seconds), on_error(message))``: runs ``fn`` off the GUI
# thread and reports on it (the window's ``TaskRunner.start``).
Runner = Callable[[Callable[[], GraphLayout], Callable, Callable[[str], None]], object]


class _Frozen:
    """While any drawing is built in slices, the objects that existed when the first one
    started are left out of the garbage collector's scans (``gc.freeze``): a full scan
    over a large program's objects, which making thousands of items soon triggers,
    would hold the GUI thread for about a tenth of a second."""

    jobs = 0

    @classmethod
    def enter(cls) -> None:
        if cls.jobs == 0:
            gc.freeze()
        cls.jobs += 1

    @classmethod
    def leave(cls) -> None:
        cls.jobs -= 1
        if cls.jobs == 0:
            gc.unfreeze()


@dataclass(eq=False)
class FoldJob:
    """A drawing on its way: where it goes (``frames``, ``expanded``), the view state it
    was asked from (``base``; if that changes meanwhile the job is dropped), and how it
    goes (``fit``, or keep the view centred where it was)."""

    what: str
    frames: list[Frame]
    expanded: dict[str, frozenset[str]]
    base: tuple
    program: object
    fit: bool
    staged: StagedDrawing | None = None
    steps: object = None
    layout: GraphLayout | None = None
    # Once the new drawing starts replacing the old one, the job only ends "done" (or
    # "dropped" with the program): the last turns add items and let Qt index them.
    committed: bool = False
    showing: object = None
    settle: int = 0
    anchor: QPointF | None = None
    keep: object = None
    started: float = field(default_factory=time.perf_counter)


class SlicedDrawing:
    """``GraphView``'s drawings built in slices (a mixin: it uses the view's frames,
    expansion state, layout cache, scene, ``runner``, ``in_slices``, ``job``, slice
    timer and ``foldStarted``/``foldEnded`` signals)."""

    def _init_slices(self) -> None:
        # Set by the window: new drawings of many items are built in slices (the event
        # loop runs between them) and their layouts computed by ``runner``.
        self.runner: Runner | None = None
        self.in_slices = False
        self.job: FoldJob | None = None
        self._slice_timer = QTimer(self)
        self._slice_timer.setSingleShot(True)
        self._slice_timer.setInterval(0)
        self._slice_timer.timeout.connect(self._slice)

    def show_state(
        self,
        frames: list[Frame],
        expanded: dict[str, frozenset[str]],
        *,
        what: str = "Drawing",
        fit: bool = False,
        keep=None,
    ) -> None:
        """Show ``frames`` with ``expanded`` scopes per frame. In slices (``in_slices``)
        the layout is computed by ``runner`` and the items made a slice at a time; the
        old drawing stays until the new one is whole, and the job is dropped if the user
        changes what the view shows meanwhile (``cancel_fold`` drops it on request).
        ``fit`` the new drawing, or ``keep`` a point where it is (see ``_place``; by
        default the scene point at the view's centre)."""
        if not frames:
            return
        self._finish_committed()
        self.cancel_fold("cancelled")
        if not (self.in_slices and self.is_large(frames[-1])):
            self._frames = list(frames)
            self._expanded = dict(expanded)
            centre = self.mapToScene(self.viewport().rect().center())
            self._rebuild(fit=fit, keep=centre if keep is None else keep)
            self._emit_state()
            return
        job = FoldJob(
            what, list(frames), dict(expanded), self.state_key(), self.session.program, fit
        )
        job.keep = keep
        self.job = job
        _Frozen.enter()
        self.foldStarted.emit(what)
        frame = frames[-1]
        shown = expanded.get(frame.key())
        if shown is None:
            shown = default_expanded(self.session.graph, self.index, frame)
            job.expanded[frame.key()] = shown
        key = (frame.key(), shown, self.within)
        cached = self._cache.get(key)
        if cached is not None or self.runner is None:
            job.layout = cached
            self._slice_timer.start()
            return
        graph, index, within = self.session.graph, self.index, self.within

        def layout() -> GraphLayout:
            return build_layout(graph, frame, shown, index=index, within=within)

        def done(result: GraphLayout, seconds: float) -> None:
            if self.job is not job:
                return
            self.layout_seconds = seconds
            self._cache.put(key, result)
            job.layout = result
            self._slice()

        def failed(message: str) -> None:
            if self.job is job:
                self._end_fold(job, message)

        self.runner(layout, done, failed)

    def is_large(self, frame: Frame) -> bool:
        """Whether ``frame`` has so many ops that its drawings are built in slices."""
        return self.index is not None and len(self.index.frame_ops(frame)) >= SLICE_OPS

    @property
    def folding(self) -> bool:
        """Whether a drawing is being built in slices."""
        return self.job is not None

    def cancel_fold(self, outcome: str = "cancelled") -> bool:
        """Drop the drawing being built (the view stays as it is); False if none."""
        job = self.job
        if job is None or (job.committed and outcome != "dropped"):
            return False
        self._end_fold(job, outcome)
        return True

    def _end_fold(self, job: FoldJob, outcome: str) -> None:
        if self.job is not job:
            return
        self.job = None
        _Frozen.leave()
        self._slice_timer.stop()
        if self.graph_scene.staging is job.staged:
            self.graph_scene.staging = None
        self.viewport().setUpdatesEnabled(True)
        self.foldEnded.emit(outcome)

    def _slice(self) -> None:
        job = self.job
        if job is None:
            return
        if job.committed:
            self._show_slice(job)
            return
        if self.state_key() != job.base or self.session.program is not job.program:
            self._end_fold(job, "dropped")
            return
        frame = job.frames[-1]
        if job.layout is None:  # no runner: the layout is this slice's work
            key = (frame.key(), job.expanded[frame.key()], self.within)
            t = time.perf_counter()
            job.layout = build_layout(
                self.session.graph, frame, key[1], index=self.index, within=self.within
            )
            self.layout_seconds = time.perf_counter() - t
            self._cache.put(key, job.layout)
            self._slice_timer.start()
            return
        if job.staged is None:
            job.staged = self.graph_scene.stage(job.layout, self.style_)
            job.steps = job.staged.steps(SLICE_S)
        next(job.steps, None)
        if not job.staged.done:
            self._slice_timer.start()
            return
        # Commit: the old picture stays on screen (no repaints) while the items go in.
        job.committed = True
        job.anchor = self.mapToScene(self.viewport().rect().center())
        self.viewport().setUpdatesEnabled(False)
        self._frames = job.frames
        self._expanded = job.expanded
        self.drops.forget()
        self.layout_ = job.layout
        job.showing = self.graph_scene.showing(job.staged, SHOW_SLICE_S)
        self._show_slice(job)

    def _finish_committed(self) -> None:
        """Finish now a drawing that is already going into the scene (a few slices)."""
        while self.job is not None and self.job.committed:
            self._show_slice(self.job)

    def _show_slice(self, job: FoldJob) -> None:
        if job.showing is not None:
            if next(job.showing, -1) != -1:
                self._slice_timer.start()
                return
            job.showing = None
            self._place(job.fit, job.anchor if job.keep is None else job.keep)
            self._slice_timer.start()
            return
        if job.settle == 0:  # Qt indexes the new items on their first query: not in a paint
            job.settle = 1
            self.scene().items(self.mapToScene(self.viewport().rect()).boundingRect())
            self._slice_timer.start()
            return
        self._end_fold(job, "done")  # repaints in the next turn
        self._emit_state()
