"""GUI benchmark on a large program (run as a script, not collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_gui.py [SOURCE]

Prints the bare ``load_program`` time, the time from opening the window to the first
paint of the program graph, and the median time to re-render after selecting a tensor
(selection, inspector and source update, repaint), all measured in this one run.
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

from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.support.paints import PaintWatch  # noqa: E402


def main(source: str = "example:transformer?layers=24") -> None:
    from shardscope.app.window.main_window import MainWindow
    from shardscope.backend.isolation.forkserver import warm_up
    from shardscope.backend.program.load import load_program

    # Both sides load through a warm worker, as the app does after its start-up.
    warm_up()
    load_program("example:conflict")
    t = time.perf_counter()
    program = load_program(source)
    _ = program.graph
    bare = time.perf_counter() - t

    app = QApplication.instance() or QApplication([])
    t0 = time.perf_counter()
    window = MainWindow(auto_propagate=False)
    window.resize(1600, 1000)
    window.show()
    watch = PaintWatch()
    window.graph.viewport().installEventFilter(watch)
    window.open_program(source)
    while window.session.program is None:
        app.processEvents()
        time.sleep(0.002)
    loaded = time.perf_counter()
    seen = watch.count
    while watch.count == seen:
        app.processEvents()
    first_paint = watch.last - t0
    view = window.graph

    graph = window.session.graph
    candidates = [b.value_id for b in view.badges if b.value_id is not None][:40]
    samples = []
    for vid in candidates:
        app.processEvents()
        t = time.perf_counter()
        view.select_value(vid)
        app.processEvents()
        samples.append(time.perf_counter() - t)

    t = time.perf_counter()
    view.set_expanded("jvp(layer_3)", True)
    app.processEvents()
    expand = time.perf_counter() - t
    t = time.perf_counter()
    view.set_expanded("jvp(layer_3)", False)
    app.processEvents()
    collapse_cached = time.perf_counter() - t

    print(f"program: {source} ({len(graph.ops)} ops, {len(graph.values)} tensors)")
    print(
        f"visible: {len(view.nodes)} nodes, {len(view.graph_scene.edges)} edges, {len(view.badges)} badges"
    )
    print(f"bare load_program + graph:     {bare:6.2f} s")
    print(f"window open to loaded:         {loaded - t0:6.2f} s")
    print(f"window open to first paint:    {first_paint:6.2f} s")
    print(f"first paint minus bare load:   {first_paint - bare:6.2f} s")
    print(
        f"select tensor + re-render:     median {statistics.median(samples) * 1000:6.1f} ms "
        f"(max {max(samples) * 1000:.1f} ms, n={len(samples)})"
    )
    print(f"expand one scope (new layout): {expand * 1000:6.1f} ms")
    print(f"fold it again (cached layout): {collapse_cached * 1000:6.1f} ms")
    window.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
