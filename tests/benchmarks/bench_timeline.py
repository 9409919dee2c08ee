"""Timeline benchmark on a large program (run as a script, not collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_timeline.py [SOURCE]

Opens the window on SOURCE, propagates, selects a tensor (so the inspector and its tile
grid follow the steps too), then measures in this one run: stepping from step k to k+1
until the window has repainted (badges at the step, the step's edges and op, the
scrubber's cursor, the inspector), and jumping to a random step. Both with the default
folded drawing and with one layer unfolded. Prints medians against the targets
(16 ms a step, 50 ms a jump) as ratios. Then it unfolds every scope (View > Expand all)
and plays at 10 steps/s with the window's own timer: the steps the window painted per
second of wall clock (target at least 9), and how long space and End, posted to the
graph view while it plays, take to act and to be painted (target 100 ms).

Run under ``x11bytes.py`` (as over ``ssh -X``), it also prints the bytes one playback
step sends to the X server (target: at most 150 KiB):

    python3 ../shared/tools/x11bytes.py -- .venv/bin/python tests/benchmarks/bench_timeline.py example:transformer
"""

from __future__ import annotations

import os
import random
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

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

STEP_TARGET_MS = 16.0
STEP_TARGET_KIB = 150.0
JUMP_TARGET_MS = 50.0
PLAY_SPEED = 10.0
PLAY_TARGET = 9.0  # steps shown per second of wall clock at PLAY_SPEED
KEY_TARGET_MS = 100.0


class PaintWatch(QObject):
    """Counts paint events of the widgets it watches."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _settle(app) -> None:
    for _ in range(3):
        app.processEvents()


def _measure(app, action, count: int) -> tuple[list[float], int]:
    samples = []
    painted = 0
    watch = _measure.watch
    for _ in range(count):
        _settle(app)
        seen = watch.count
        t = time.perf_counter()
        action()
        app.processEvents()
        samples.append((time.perf_counter() - t) * 1000)
        painted += watch.count > seen
    return samples, painted


def _line(label: str, samples: list[float], target: float, painted: int) -> str:
    med = statistics.median(samples)
    p90 = sorted(samples)[int(len(samples) * 0.9) - 1]
    return (
        f"{label:34s} median {med:6.2f} ms  p90 {p90:6.2f} ms  max {max(samples):6.2f} ms  "
        f"n={len(samples)} repainted={painted}  target {target:.0f} ms  ratio {med / target:.2f}"
    )


def _x11_bytes(app, pb) -> None:
    """Bytes to the X server per playback step and while idle (needs x11bytes.py)."""
    sys.path.insert(0, str(ROOT.parent.parent / "shared" / "tools"))
    sys.path.insert(0, "/work/shared/tools")
    import x11bytes

    pb.seek(len(pb) // 3)
    for _ in range(20):  # the step shown and Provenance's explanation of it
        app.processEvents()
        time.sleep(0.02)
    # steps as playing makes them (the window's timer is stopped: ticks come from here)
    before = x11bytes.read()
    pb.play()
    window_timer = _x11_bytes.timer
    window_timer.stop()
    # starting to play is no step: the play button and Provenance's note say it once
    for _ in range(10):
        app.processEvents()
        time.sleep(0.02)
    start = (x11bytes.read()["to_server"] - before["to_server"]) / 1024
    per_step = []
    for _ in range(12):
        before = x11bytes.read()
        pb.tick(1.0 / pb.speed)
        window_timer.stop()
        for _ in range(5):
            app.processEvents()
            time.sleep(0.02)
        after = x11bytes.read()
        per_step.append((after["to_server"] - before["to_server"]) / 1024)
    before = x11bytes.read()
    for _ in range(20):
        app.processEvents()
        time.sleep(0.05)
    idle = (x11bytes.read()["to_server"] - before["to_server"]) / 1024
    med = statistics.median(per_step)
    print(
        f"X11 bytes per playback step: median {med:.1f} KiB, max {max(per_step):.1f} KiB "
        f"(n={len(per_step)}), target {STEP_TARGET_KIB:.0f} KiB, ratio {med / STEP_TARGET_KIB:.2f}"
    )
    print("  each step, KiB:", " ".join(f"{k:.0f}" for k in per_step))
    print(f"X11 bytes idle for 1 s: {idle:.1f} KiB")
    print(f"X11 bytes to start playing (once): {start:.1f} KiB")
    pb.pause()


def main(source: str = "example:transformer?layers=24") -> None:
    from shardscope.app.window.main_window import MainWindow
    from shardscope.backend.isolation.forkserver import warm_up

    warm_up()
    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=False)
    window.resize(1600, 1000)
    window.show()
    window.open_program(source)
    while window.session.program is None:
        app.processEvents()
        time.sleep(0.002)
    t = time.perf_counter()
    window.propagation.propagate_now()
    while window.timeline.playback is None:
        app.processEvents()
        time.sleep(0.002)
    propagated = time.perf_counter() - t
    graph = window.session.graph
    view = window.graph
    watch = PaintWatch()
    for widget in (view.viewport(), window.timeline.panel.scrubber, window.inspector.tile_grid):
        widget.installEventFilter(watch)
    _measure.watch = watch
    pb = window.timeline.playback
    rng = random.Random(0)
    # a tensor the steps reach, selected so the inspector follows it
    target = next(
        (
            b.value_id
            for b in view.badges
            if b.value_id is not None and pb.timeline.changes(b.value_id)
        ),
        None,
    )
    if target is not None:
        view.select_value(target)
    print(f"program: {source} ({len(graph.ops)} ops, {len(graph.values)} tensors)")
    print(f"timeline: {len(pb.timeline.steps)} step rows, {len(pb)} positions")
    print(f"window propagate to playback ready: {propagated:.2f} s")
    scopes = [n.node for n in view.nodes if n.node.kind == "scope"]
    biggest = max(scopes, key=lambda n: n.count).scope if scopes else None
    for label, expand in (("folded", None), (f"unfolded {biggest}", biggest)):
        if expand is not None:
            view.set_expanded(expand, True)
        _settle(app)
        print(f"-- {label}: {len(view.nodes)} nodes, {len(view.badges)} badges")
        start = rng.randrange(0, len(pb) - 400)
        pb.seek(start)
        steps, painted = _measure(app, pb.advance, 300)
        print(_line("step k -> k+1 repainted", steps, STEP_TARGET_MS, painted))
        jumps, painted = _measure(app, lambda: pb.seek(rng.randrange(len(pb))), 100)
        print(_line("jump to a random step repainted", jumps, JUMP_TARGET_MS, painted))
    if os.environ.get("X11BYTES_FILE"):
        _x11_bytes.timer = window.timeline.timer
        _x11_bytes(app, pb)
    t = time.perf_counter()
    pb.reset()
    app.processEvents()
    print(f"back to the final state: {(time.perf_counter() - t) * 1000:.1f} ms")
    _playing_expanded(app, window)
    window.close()


class PaintedSteps(QObject):
    """The playback positions a widget was painted at while watched."""

    def __init__(self, playback) -> None:
        super().__init__()
        self.playback = playback
        self.positions: list[int | None] = []

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.positions.append(self.playback.position)
        return False


def _wait(app, done, limit: float = 120.0) -> None:
    end = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > end:
            raise SystemExit("bench_timeline: timed out waiting for the window")
        app.processEvents()
        time.sleep(0.001)


def _run_loop(seconds: float, *at: tuple[float, object]) -> None:
    """Run the event loop for ``seconds``, calling each callback at its time."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    for when, callback in at:
        QTimer.singleShot(int(when * 1000), callback)
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def _post_key(widget, key) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QKeyEvent

    app = QApplication.instance()
    app.postEvent(widget, QKeyEvent(QEvent.Type.KeyPress, key, Qt.KeyboardModifier.NoModifier))
    app.postEvent(widget, QKeyEvent(QEvent.Type.KeyRelease, key, Qt.KeyboardModifier.NoModifier))


def _playing_expanded(app, window) -> None:
    """Play the fully unfolded program at PLAY_SPEED with the window's own timer: the steps
    the window was painted at per second of wall clock, and how long space (pause) and End
    (last step) take to act while it plays and until the window painted the result, the
    keys posted to the graph view as a keyboard's would be."""
    from PySide6.QtCore import Qt

    view = window.graph
    ended: list[str] = []
    view.foldEnded.connect(ended.append)
    t = time.perf_counter()
    view.expand_all()
    _wait(app, lambda: ended or not view.folding)
    expand_s = time.perf_counter() - t
    for _ in range(5):
        app.processEvents()
    pb = window.timeline.playback
    print(
        f"-- expanded (View > Expand all, {expand_s:.1f} s): {len(view.nodes)} nodes, "
        f"{len(view.badges)} badges, playing at {PLAY_SPEED:g} steps/s"
    )
    pb.set_speed(PLAY_SPEED)
    # the step label's text changes at every step, and the window paints what changed in
    # one go: a position it was painted at is a step the user saw
    painted = PaintedSteps(pb)
    label = window.timeline.panel.step_label
    label.installEventFilter(painted)
    rates = []
    overlay = window.timeline.overlay
    for start in (len(pb) // 5, len(pb) // 2):
        pb.seek(start)
        _wait(app, lambda: overlay.settled)
        for _ in range(5):
            app.processEvents()
        painted.positions.clear()
        seconds = 3.0
        t = time.perf_counter()
        pb.play()
        _run_loop(seconds)
        wall = time.perf_counter() - t
        pb.pause()
        shown = len({p for p in painted.positions if p is not None and p > start})
        advanced = pb.position - start
        rates.append(shown / wall)
        print(
            f"played from step {start}: {shown} steps painted in {wall:.2f} s "
            f"({shown / wall:.1f}/s; the clock advanced {advanced}), "
            f"target >= {PLAY_TARGET:g}/s, ratio {shown / wall / PLAY_TARGET:.2f}"
        )
    label.removeEventFilter(painted)
    rate = min(rates)
    print(
        f"played rate (worst of {len(rates)}):       {rate:6.1f} steps/s  target >= "
        f"{PLAY_TARGET:g}  ratio {rate / PLAY_TARGET:.2f}"
    )
    # keys while playing, posted at odd moments of the step period: until the playback
    # did what the key asks, and until the graph was painted after it
    for label, key, acted in (
        ("space (pause)", Qt.Key.Key_Space, lambda: not pb.playing),
        ("End (last step)", Qt.Key.Key_End, lambda: pb.at_end and not pb.playing),
    ):
        handled, shown = [], []
        for k in range(5):
            pb.seek(len(pb) // 3 + 40 * k)
            _wait(app, lambda: overlay.settled)
            for _ in range(5):
                app.processEvents()
            times: dict[str, float] = {}

            def press(key=key, times=times) -> None:
                times["posted"] = time.perf_counter()
                _post_key(view, key)

            def on_event(_event, acted=acted, times=times) -> None:
                if "posted" in times and "acted" not in times and acted():
                    times["acted"] = time.perf_counter()

            paints = _FirstPaint(times)
            app.installEventFilter(paints)
            pb.listen(on_event)
            pb.play()
            phase = 0.5 + 0.037 * k
            _run_loop(phase + 1.0, (phase, press))
            pb.unlisten(on_event)
            app.removeEventFilter(paints)
            pb.pause()
            posted = times["posted"]
            handled.append((times.get("acted", float("inf")) - posted) * 1000)
            shown.append((times.get("painted", float("inf")) - posted) * 1000)
        for what, samples in (("acted", handled), ("painted", shown)):
            print(
                f"key {label:16s} {what:8s} median {statistics.median(samples):6.1f} ms  "
                f"max {max(samples):6.1f} ms  n={len(samples)}  target <= "
                f"{KEY_TARGET_MS:.0f} ms  ratio {max(samples) / KEY_TARGET_MS:.2f} (max)"
            )


class _FirstPaint(QObject):
    """Notes in ``times["painted"]`` the first paint of any widget after ``times["acted"]``."""

    def __init__(self, times: dict[str, float]) -> None:
        super().__init__()
        self.times = times

    def eventFilter(self, obj, event) -> bool:
        times = self.times
        if event.type() == QEvent.Type.Paint and "acted" in times and "painted" not in times:
            times["painted"] = time.perf_counter()
        return False


if __name__ == "__main__":
    main(*sys.argv[1:])
