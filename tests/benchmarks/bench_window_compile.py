"""Benchmark: a spec edit in the window until the badges repaint and until the compiled
collectives are on screen, against Shardy alone and the bare work (run as a script, not
collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_window_compile.py \
        [--layers 24] [--mesh data=4,model=2 ...] [--order NAME ...]

For each mesh (the example's own, and data=8,model=256: 2,048 devices), all measured in
this one run, on the same program, mesh and specs:

- window: a ``MainWindow`` (offscreen) with ``example:transformer?layers=N`` open on the
  mesh; an axis dropped on a tensor's dimension (the window's undoable command), then
  undo, each a few seconds after the one before, as a user's edits come. Timed from the
  edit to the graph's first paint after the badges show its final shardings
  (``events.final_specs``), and to the window's first paint after its compiled
  collectives came (``events.compiled``; the status bar says "compiled in"). Timed with
  nothing compiled, and for each order of the compile (``ORDERS``: when its worker
  starts, when it gets the module; a spare worker is started after a compile and imports
  JAX before the next edit).
- Shardy alone: the backend's pass lists on a freshly annotated module (as
  ``bench_edit``), median of two.
- bare work: Shardy alone plus one XLA compile of the same annotated module with XLA's
  default options on as many fake CPU devices, in a fresh process timed from its imports'
  end (``bench_compiled``'s ``--compile``: the compile ``jax.jit(...).compile()`` does,
  the CPU client's start included).

Prints edit→badges / Shardy alone (target at most 1.5x) and edit→compiled on screen /
bare work (target at most 1.3x) for each order; the window's own order is marked.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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

BADGES_TARGET = 1.5
COMPILED_TARGET = 1.3
MESHES = ("data=4,model=2", "data=8,model=256")
# The tensor and dimension the edit drops an axis on, and the axis.
EDIT = ("tokens", 1, "model")
# Seconds between edits: a user's pause.
PAUSE_S = 8.0
# WindowCompiler's settings for each order: (spare, worker_at_edit, module_at_once).
ORDERS = {
    "worker with the edit, module at once": (False, True, True),
    "worker with the edit, module once the badges show": (False, True, False),
    "worker and module once the badges show": (False, False, False),
    "spare worker, module at once": (True, False, True),
    "spare worker, module once the badges show": (True, False, False),
}
BY_SETTINGS = {settings: name for name, settings in ORDERS.items()}


def pump_until(app, done, timeout: float = 1200.0) -> None:
    deadline = time.perf_counter() + timeout
    while not done():
        if time.perf_counter() > deadline:
            raise SystemExit("the window did not get there in time")
        app.processEvents()
        time.sleep(0.0005)


def pause(app, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.01)


def shardy_alone(session, repeat: int = 2) -> float:
    """Median seconds of the backend's pass lists on fresh annotated modules."""
    from shardscope.backend.program.mlir import run_passes
    from shardscope.backend.propagation.pipeline import pipeline_stages
    from shardscope.backend.propagation.propagate import prepare

    propagate_passes, export = pipeline_stages(True)
    specs = session.specs_for_propagation()
    samples = []
    for _ in range(repeat):
        prep = prepare(session.program, session.mesh, specs, strict=False)
        t = time.perf_counter()
        run_passes(prep.module, propagate_passes)
        run_passes(prep.module, export)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def default_compile(session) -> float:
    """Seconds of XLA's default compile of the session's annotated module, in a fresh
    process (``bench_compiled.py --compile``)."""
    from shardscope.backend.propagation.propagate import prepare

    prep = prepare(
        session.program, session.mesh, session.specs_for_propagation(), keep_annotated=True
    )
    devices = session.mesh.size
    with tempfile.TemporaryDirectory(prefix="bench-window-bare-") as tmp:
        job, out = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job.write_text(json.dumps({"module": prep.annotated_text, "devices": devices}))
        env = {
            **os.environ,
            "JAX_PLATFORMS": "cpu",
            "JAX_ENABLE_COMPILATION_CACHE": "false",
            "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
        }
        script = Path(__file__).with_name("bench_compiled.py")
        command = [sys.executable, str(script), "--compile", str(job), str(out)]
        subprocess.run(command, check=True, env=env, cwd=ROOT)
        return float(json.loads(out.read_text())["compile_s"])


def measure(app, window, watch, graph_watch, order: str | None) -> list[dict[str, float]]:
    """Edit and undo, each timed to the badges' and to the compiled collectives' paint
    (``order`` None: the badges alone, nothing compiled)."""
    session = window.session
    compiler = window.propagation.compiler
    start = compiler.start
    if order is None:
        compiler.start = lambda generation, mesh: compiler.end()
    else:
        compiler.spare, compiler.worker_at_edit, compiler.module_at_once = ORDERS[order]
        if compiler.spare:
            compiler._start_spare(session.mesh.size)
    name, dim, axis = EDIT
    value = session.graph.value_by_name(name)
    marks: dict[str, float] = {}

    def on_final() -> None:
        marks.setdefault("final", time.perf_counter())

    def on_compiled(result) -> None:
        if result is session.propagation:
            marks.setdefault("compiled", time.perf_counter())

    session.events.final_specs.connect(on_final)
    session.events.compiled.connect(on_compiled)
    samples = []
    for action in (lambda: window.on_spec_dropped(value.id, dim, axis), window.undo.qstack.undo):
        pause(app, PAUSE_S)
        marks.clear()
        t0 = time.perf_counter()
        action()
        pump_until(app, lambda: "final" in marks)
        pump_until(app, lambda: graph_watch.last > marks["final"])
        badges = graph_watch.last - t0
        if order is None:
            pump_until(app, lambda: not window.runner.busy)
            samples.append({"badges": badges})
            continue
        pump_until(app, lambda: "compiled" in marks)
        pump_until(app, lambda: watch.last > marks["compiled"])
        compiled = watch.last - t0
        error = session.analysis.compile_error
        if error:
            raise SystemExit(f"the compile failed: {error}")
        samples.append({"badges": badges, "compiled": compiled})
    session.events.final_specs.disconnect(on_final)
    session.events.compiled.disconnect(on_compiled)
    compiler.start = start
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--mesh", action="append", help="meshes to measure (default: both)")
    parser.add_argument("--order", action="append", choices=list(ORDERS), help="default: all")
    args = parser.parse_args()
    source = f"example:transformer?layers={args.layers}"
    orders = args.order or list(ORDERS)

    from shardscope.app.window.main_window import MainWindow
    from shardscope.backend.isolation.forkserver import warm_up
    from shardscope.backend.session.edits import SetMesh
    from shardscope.backend.sharding.mesh import parse_mesh

    warm_up()
    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=True)
    compiler = window.propagation.compiler
    own = BY_SETTINGS.get((compiler.spare, compiler.worker_at_edit, compiler.module_at_once))
    window.resize(1600, 1000)
    window.show()
    watch = PaintWatch()  # any widget: the status bar says "compiled in"
    app.installEventFilter(watch)
    graph_watch = PaintWatch()  # the graph: its badges
    window.graph.viewport().installEventFilter(graph_watch)
    session = window.session
    compiled: list = []
    session.events.compiled.connect(compiled.append)
    window.open_program(source)
    pump_until(app, lambda: session.propagation is not None and compiled)
    print(f"program: {source} ({len(session.graph.ops)} ops); edit: {EDIT}", flush=True)
    for mesh_text in args.mesh or MESHES:
        mesh = parse_mesh(mesh_text)
        if session.mesh != mesh:
            compiled.clear()
            window.push(SetMesh(mesh))
            pump_until(app, lambda: session.propagation is not None and compiled)
        alone = measure(app, window, watch, graph_watch, None)
        results = {order: measure(app, window, watch, graph_watch, order) for order in orders}
        pause(app, PAUSE_S)
        shardy = shardy_alone(session)
        xla = default_compile(session)
        bare = shardy + xla
        print(f"mesh {mesh_text} ({mesh.size} devices):")
        print(f"  Shardy alone (backend pass lists):      {shardy:7.2f} s")
        print(f"  XLA's default compile, fresh process:   {xla:7.2f} s")
        print(f"  bare work (Shardy + one compile):       {bare:7.2f} s")
        badges = statistics.median(s["badges"] for s in alone)
        print("  nothing compiled (median of edit and undo):")
        print(f"    edit to badges:   {badges:7.2f} s = {badges / shardy:.2f}x Shardy alone")
        for order, samples in results.items():
            badges = statistics.median(s["badges"] for s in samples)
            on_screen = statistics.median(s["compiled"] for s in samples)
            mark = " [the window's]" if order == own else ""
            print(f"  {order}{mark} (median of edit and undo):")
            print(
                f"    edit to badges:   {badges:7.2f} s = {badges / shardy:.2f}x Shardy alone "
                f"(target <= {BADGES_TARGET}x)"
            )
            print(
                f"    edit to compiled: {on_screen:7.2f} s = {on_screen / bare:.2f}x the bare "
                f"work (target <= {COMPILED_TARGET}x)",
                flush=True,
            )
    window.close()


if __name__ == "__main__":
    main()
