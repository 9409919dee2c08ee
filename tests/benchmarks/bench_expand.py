"""Expand all and collapse all on a large program (run as a script, not collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_expand.py [SOURCE]

Loads the program into a graph view and times, in this one run: the layout of the fully
unfolded frame alone (``build_layout``), the whole expand-all rebuild of the view (layout
plus items: nodes, edges, badges, scope regions and their name placement), folding
everything again, and unfolding one scope in the folded view. Prints how many
rectangle tests the scope-name placement made. Target: expand all on 24 layers in at
most 2 s. Then, in the same run, expand all and collapse all as the window does them
(layout in the task pool, items in slices) with a 5 ms timer ticking: the longest gap
between two ticks is the longest the window was frozen (target: 100 ms). It also times placing the same name spots against the grid of badges and
against every badge (the way it was done before), in this run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def _covered_by_all(rect: QRectF, others: list[QRectF]) -> float:
    """How scope names were placed before the grid: every spot against every badge."""
    total = 0.0
    for other in others:
        overlap = rect.intersected(other)
        total += max(0.0, overlap.width()) * max(0.0, overlap.height())
    return total


def main(source: str = "example:transformer?layers=24") -> None:
    from shardscope.backend.program.layout import Frame, all_scopes, build_layout
    from shardscope.backend.program.load import load_program
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.graph_panel import GraphPanel

    app = QApplication.instance() or QApplication([])
    program = load_program(source)
    graph = program.graph
    session = Session()
    panel = GraphPanel(session)
    panel.resize(1600, 1000)
    panel.show()
    session.set_program(program)
    app.processEvents()
    view = panel.view
    frame = Frame(graph.main)
    everything = frozenset(all_scopes(graph, view.index, frame))

    t = time.perf_counter()
    build_layout(graph, frame, everything, index=view.index)
    layout_s = time.perf_counter() - t

    t, cpu = time.perf_counter(), time.thread_time()
    view.expand_all()
    app.processEvents()
    expand_s = time.perf_counter() - t
    # the GUI thread's own CPU time: on a loaded machine the wall clock also counts the
    # time other processes had the CPU
    expand_cpu = time.thread_time() - cpu
    index = view.graph_scene.header_index
    shown = (
        len(view.nodes),
        len(view.graph_scene.edges),
        len(view.badges),
        len(view.layout_.boxes),
    )

    # The same spots placed both ways, in this run: the grid against testing every badge
    # (what placing the names cost before, 41.6 M tests per rebuild).
    rects = [QRectF(*r) for r in index.rects]
    spots = [
        (b.x() - 40.0, b.y() - 30.0, 120.0, 18.0)
        for b in view.badges[:: max(1, len(view.badges) // 200)]
    ]
    t = time.perf_counter()
    grid = [index.covered(spot) for spot in spots]
    grid_s = (time.perf_counter() - t) / len(spots)
    t = time.perf_counter()
    pairs = [_covered_by_all(QRectF(*spot), rects) for spot in spots]
    pairs_s = (time.perf_counter() - t) / len(spots)
    assert all(abs(a - b) < 1e-6 for a, b in zip(grid, pairs, strict=True))

    t = time.perf_counter()
    view.collapse_all()
    app.processEvents()
    collapse_s = time.perf_counter() - t

    scope = next(n.scope for n in view.layout_.nodes if n.kind == "scope")
    t = time.perf_counter()
    view.set_expanded(scope, True)
    app.processEvents()
    one_s = time.perf_counter() - t

    print(f"program: {source} ({len(graph.ops)} ops, {len(everything)} scopes)")
    print(f"expanded: {shown[0]} nodes, {shown[1]} edges, {shown[2]} badges, {shown[3]} regions")
    print(f"layout alone (build_layout):      {layout_s:7.2f} s")
    print(
        f"expand all (layout + items):      {expand_s:7.2f} s  (target <= 2 s, ratio "
        f"{expand_s / 2:.2f}; CPU {expand_cpu:.2f} s, ratio {expand_cpu / 2:.2f})"
    )
    print(f"  scope-name spots tried:         {index.queries:>12,}")
    print(f"  rectangle tests, all pairs:     {index.queries * len(index):>12,}")
    print(f"  rectangle tests, grid:          {index.tests:>12,}")
    print(
        f"  one spot, grid vs all pairs:    {grid_s * 1e6:7.1f} us vs {pairs_s * 1e6:.0f} us "
        f"(ratio {pairs_s / grid_s:.0f}x; all pairs for every spot: "
        f"{pairs_s * index.queries:.1f} s)"
    )
    print(f"collapse all (cached layout):     {collapse_s:7.2f} s")
    print(f"unfold one scope ({scope}):  {one_s:7.2f} s")
    print()
    _responsive(app, panel, everything)
    panel.close()


def _responsive(app, panel, everything) -> None:
    """Expand all and collapse all as the window does them (layout in the task pool, items
    in slices), on a fresh layout cache, while a timer ticks every 5 ms: the longest gap
    between two ticks is the longest the GUI thread was blocked in one go."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from shardscope.app.window.tasks import TaskRunner

    view = panel.view
    view.collapse_all()
    view._cache.clear()
    for _ in range(3):  # the folded drawing is painted before the clock starts
        app.processEvents()
    runner = TaskRunner()
    view.runner = runner.start
    view.in_slices = True
    gaps: list[float] = []
    clock = QElapsedTimer()
    ticker = QTimer()
    ticker.setInterval(5)

    def tick() -> None:
        gaps.append(clock.restart() / 1000.0)

    ticker.timeout.connect(tick)

    def timed(action) -> tuple[float, float, str]:
        loop = QEventLoop()
        outcome: list[str] = []

        def ended(what: str) -> None:
            outcome.append(what)
            loop.quit()

        view.foldEnded.connect(ended)
        gaps.clear()
        t = time.perf_counter()
        clock.start()
        ticker.start()
        action()
        if not outcome:
            loop.exec()
        # the turn that showed the drawing ends when the loop runs again
        app.processEvents()
        ticker.stop()
        gaps.append(clock.elapsed() / 1000.0)
        view.foldEnded.disconnect(ended)
        return time.perf_counter() - t, max(gaps), outcome[0]

    target_ms = 100
    expand_s, expand_gap, what = timed(view.expand_all)
    assert what == "done" and view.expanded() == everything, what
    for _ in range(3):
        app.processEvents()
    collapse_s, collapse_gap, what = timed(view.collapse_all)
    assert what == "done" and not view.expanded(), what
    print("in slices, layout off the GUI thread (as the window does it):")
    print(f"expand all:                       {expand_s:7.2f} s  (target <= 2 s)")
    print(
        f"  GUI thread blocked at most:     {expand_gap * 1000:7.0f} ms "
        f"(target <= {target_ms} ms: {expand_gap * 1000 / target_ms:.2f}x)"
    )
    print(f"collapse all:                     {collapse_s:7.2f} s")
    print(
        f"  GUI thread blocked at most:     {collapse_gap * 1000:7.0f} ms "
        f"(target <= {target_ms} ms: {collapse_gap * 1000 / target_ms:.2f}x)"
    )

    # Side by side: a second pane follows (layouts shared, its own items in slices).
    from shardscope.viewers.graph.graph_panel import GraphPanel
    from shardscope.viewers.graph.sync import ViewSync

    second = GraphPanel(view.session, restore=False)
    second.resize(1600, 1000)
    second.show()
    second.view.share_layouts(view)
    second.view.runner = runner.start
    second.view.in_slices = True
    sync = ViewSync(view, second.view)
    view._cache.clear()
    for _ in range(3):
        app.processEvents()

    def both_done(action):
        def run() -> None:
            action()

        loop = QEventLoop()

        def check(_outcome: str) -> None:
            if second.view.state_key() == view.state_key() and not second.view.folding:
                loop.quit()

        second.view.foldEnded.connect(check)
        gaps.clear()
        t = time.perf_counter()
        clock.start()
        ticker.start()
        run()
        loop.exec()
        app.processEvents()
        ticker.stop()
        second.view.foldEnded.disconnect(check)
        return time.perf_counter() - t, max(gaps)

    pair_s, pair_gap = both_done(view.expand_all)
    assert second.view.expanded() == everything
    print("side by side (the second pane follows the first):")
    print(f"expand all, both panes drawn:     {pair_s:7.2f} s")
    print(
        f"  GUI thread blocked at most:     {pair_gap * 1000:7.0f} ms "
        f"(target <= {target_ms} ms: {pair_gap * 1000 / target_ms:.2f}x)"
    )
    sync.close()
    second.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
