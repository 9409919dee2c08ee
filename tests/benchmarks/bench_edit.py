"""Benchmark: a spec edit in the window until the badges show the final shardings, against
Shardy's pipeline alone on the same module (run as a script, not collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_edit.py [SOURCE] [--repeat N]

Both are measured in this one run, on the same program, mesh and specs:

- pipeline: ``prepare`` (parse, annotate) is left out; what is timed is ``run_passes`` with
  the two pass lists the backend runs (``pipeline_stages()``: Shardy's registered
  propagation pipeline with its debug options on, cut where the steps are read), median
  of ``--repeat`` fresh modules. The same pipeline without debug options is printed too.
- window: a ``MainWindow`` (offscreen) with the program open and propagated; a drop of an
  axis on a tensor's dimension goes through the window's undoable command (``push``);
  the clock stops at the first paint of the graph after the badges show the shardings of
  the propagation that edit started (the final shardings the program's propagation
  server sends ahead of the result). Edit, undo and redo, each timed; median.

Prints both, the window's parts (until the task starts, until the shardings arrive,
showing and painting them), when the whole result (steps, conflicts, collectives)
follows, whether the first paint's badges equal the whole result's, and the ratio against
the 1.5x target.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_state = tempfile.mkdtemp(prefix="shardscope-bench-")
os.environ["SHARDSCOPE_STATE_DIR"] = _state
os.environ["SHARDSCOPE_SETTINGS"] = str(Path(_state) / "settings.ini")
os.environ["SHARDSCOPE_UNSAVED"] = "discard"  # the edits are the benchmark's own

from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.support.paints import PaintWatch  # noqa: E402

TARGET = 1.5
# The tensor and dimension the edit drops an axis on, and the axis.
EDIT = ("tokens", 1, "model")


def pipeline_seconds(session, repeat: int) -> tuple[float, float]:
    """Median seconds of the backend's pass lists, and of the plain registered pipeline,
    on fresh annotated modules of the session's program."""
    from shardscope.backend.program.mlir import run_passes
    from shardscope.backend.propagation.pipeline import pipeline_stages
    from shardscope.backend.propagation.propagate import prepare

    propagate_passes, export = pipeline_stages(True)
    debug, plain = [], []
    specs = session.specs_for_propagation()
    for _ in range(repeat):
        prep = prepare(session.program, session.mesh, specs, strict=False)
        t = time.perf_counter()
        run_passes(prep.module, propagate_passes)
        run_passes(prep.module, export)
        debug.append(time.perf_counter() - t)
        prep = prepare(session.program, session.mesh, specs, strict=False)
        t = time.perf_counter()
        run_passes(prep.module, "builtin.module(sdy-propagation-pipeline)")
        plain.append(time.perf_counter() - t)
    return statistics.median(debug), statistics.median(plain)


def main(source: str = "example:transformer?layers=24", repeat: int = 3) -> None:
    from shardscope.app.window.main_window import MainWindow
    from shardscope.backend.isolation.forkserver import warm_up

    warm_up()
    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=True)
    window.resize(1600, 1000)
    window.show()
    watch = PaintWatch()
    window.graph.viewport().installEventFilter(watch)
    window.open_program(source)
    scheduler = window.propagation
    while window.session.program is None or scheduler.count == 0:
        app.processEvents()
        time.sleep(0.002)
    session = window.session
    graph = session.graph
    name, dim, axis = EDIT
    value = graph.value_by_name(name)

    def badges_now() -> dict[int, str | None]:
        return {
            b.value_ids[0]: window.graph.badge_text(b.value_ids[0]) for b in window.graph.badges
        }

    shown: list[float] = []  # when the session last got shardings to show

    def note_shown(*_args) -> None:
        if session.propagation is not None or _args == ():
            shown.append(time.perf_counter())

    session.events.final_specs.connect(note_shown)
    session.events.propagation.connect(note_shown)
    first_paint_badges: list[dict] = []

    def timed(action) -> dict[str, float]:
        for _ in range(20):
            app.processEvents()
        before_count = scheduler.count
        task_seconds = []
        original = scheduler.runner.start

        def start(fn, done, failed):
            started = time.perf_counter()

            def timed_done(result, seconds):
                task_seconds.append((started, time.perf_counter()))
                done(result, seconds)

            return original(fn, timed_done, failed)

        scheduler.runner.start = start
        shown.clear()
        t0 = time.perf_counter()
        action()
        while not shown:
            app.processEvents()
            time.sleep(0.0005)
        applied = shown[0]
        seen = watch.count
        while watch.count == seen or watch.last < applied:
            app.processEvents()
        painted = watch.last
        first_paint_badges.append(badges_now())
        while scheduler.count == before_count:
            app.processEvents()
            time.sleep(0.0005)
        full = time.perf_counter()
        scheduler.runner.start = original
        started, finished = task_seconds[-1]
        return {
            "total": painted - t0,
            "debounce": started - t0,
            "shown": applied - started,
            "apply+paint": painted - applied,
            "result": full - t0,
            "task": finished - started,
        }

    before = badges_now()
    samples = [timed(lambda: window.on_spec_dropped(value.id, dim, axis))]
    after = badges_now()
    changed = sum(1 for k, v in after.items() if before.get(k) != v)
    same_first = first_paint_badges[0] == after
    samples.append(timed(window.undo.qstack.undo))
    same_first = same_first and first_paint_badges[1] == before
    samples.append(timed(window.undo.qstack.redo))
    same_first = same_first and first_paint_badges[2] == after
    pipeline, plain = pipeline_seconds(session, repeat)

    def med(key: str) -> float:
        return statistics.median(s[key] for s in samples)

    total = med("total")
    print(f"program: {source} ({len(graph.ops)} ops); edit: {name} dim {dim} <- {axis}")
    print(f"badges repainted by the edit: {changed} of {len(after)}")
    steps = len(session.propagation.timeline.steps) if session.propagation else 0
    print(f"propagation steps: {steps}")
    print(f"Shardy pipeline alone (backend pass lists, debug on): {pipeline:6.3f} s")
    print(f"Shardy pipeline alone (registered, no debug options): {plain:6.3f} s")
    print(f"edit to repainted badges (median of {len(samples)}):    {total:6.3f} s")
    print(f"  edit until the task starts:                       {med('debounce'):6.3f} s")
    print(f"  task start until the final shardings arrive:      {med('shown'):6.3f} s")
    print(f"  show them and paint:                              {med('apply+paint'):6.3f} s")
    print(f"edit to the whole result (steps, conflicts...):     {med('result'):6.3f} s")
    print(f"  of which the task (server or forked propagate):   {med('task'):6.3f} s")
    print(f"badges at the first paint equal those of the whole result: {same_first}")
    ratio = total / pipeline
    verdict = "within" if ratio <= TARGET else "over"
    print(f"ratio: {ratio:.2f}x the pipeline (target at most {TARGET}x: {verdict})")
    window.close()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--repeat")]
    rep = next((int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--repeat=")), 3)
    main(*args[:1], repeat=rep)
