"""Bytes between the window and the X server, as over ``ssh -X`` (run under x11bytes).

    python3 ../shared/tools/x11bytes.py -- .venv/bin/python tests/benchmarks/bench_x11.py \
        [SOURCE]

Opens the window on ``SOURCE`` (default ``example:transformer``) at 1600x1000, lets it
load, propagate, compile and paint, then measures in this one run the bytes the app sent
to the X server for each of these actions and the painting it causes:

- selecting a tensor into the empty inspector (a 3-D one where the view shows one), and
  what the Tensor dock and the Provenance dock each draw of it alone;
- selecting each of a few tensors in view (a 1-D, a 2-D and a 3-D one among them), each
  from the tensor before: every one is printed against the target, not their median;
- one playback step (median and largest of 12, as the playing timer makes them);
- unfolding a scope: the first one, at the top (what it unfolds fills most of the view)
  and the one nearest the middle of the view; one notch of the mouse wheel over the
  graph (zooming in);
- two seconds of idling, and two seconds of a busy indicator (the compile's, a folding's)
  with its moving bar and, as over a remote display, without it.

Before each action the window's background work (propagation, XLA's compile) has ended,
so a count holds what the action drew, not a compile's busy bar or its results arriving.
Prints each count with its target and the ratio (count / target; at most 1 meets it),
and beside it the floor: 4 bytes for each pixel of the window that looks different after
the action (what repainting exactly the changed pixels sends; copying what moved on the
X server, as unfolding does, sends less). Targets: each selection at most 300 KiB,
unfolding at most 600 KiB, a playback step at most 150 KiB, idle 0; zooming has none of
its own (every drawn pixel of the view changes): its count is printed against its floor.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# x11bytes.py lives in the shared tools folder beside the checkout (../shared/tools from
# the main checkout, ../../shared/tools from a worktree under wt/)
for up in (ROOT.parent, ROOT.parent.parent):
    sys.path.insert(0, str(up / "shared" / "tools"))
_state = tempfile.mkdtemp(prefix="shardscope-bench-")
os.environ["SHARDSCOPE_STATE_DIR"] = _state
os.environ["SHARDSCOPE_SETTINGS"] = str(Path(_state) / "settings.ini")

import numpy as np  # noqa: E402
import x11bytes  # noqa: E402
from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from shardscope.viewers.common.damage import _pixels as image_pixels  # noqa: E402

SELECT_KIB = 300.0
UNFOLD_KIB = 600.0
STEP_KIB = 150.0
SELECTIONS = 5
STEPS = 12


def settle(app, seconds: float = 0.6) -> dict[str, int]:
    """Let Qt paint what the last action caused, then read the settled totals."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    return x11bytes.read()


def wait_idle(app, window, timeout: float = 120.0) -> None:
    """Until no load, propagation or compile is under way or pending."""
    compiler = window.propagation.compiler
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        settle(app, 0.05)
        if not (window.runner.busy or window.propagation.pending or compiler.compiling):
            return
    print(f"(background work still running after {timeout:.0f} s)")


FLOORS: dict[str, float] = {}


def _pixels(window) -> np.ndarray:
    return image_pixels(window.grab().toImage())


def cost(app, window, action, seconds: float = 0.6, label: str | None = None) -> float:
    """KiB sent to the X server for ``action`` and the painting it causes; with
    ``label``, the action's floor (4 bytes per pixel of the window that differs after
    it) is kept in ``FLOORS``. A grab draws into memory: it sends nothing."""
    wait_idle(app, window)
    was = _pixels(window) if label else None
    before = settle(app, 0.2)
    action()
    after = settle(app, seconds)
    if label:
        now = _pixels(window)
        same = was.shape == now.shape
        FLOORS[label] = 4 * (int((was != now).sum()) if same else now.size) / 1024
    return (after["to_server"] - before["to_server"]) / 1024


def wheel(view, notches: int = 1) -> None:
    """One notch of the mouse wheel over the middle of the graph, as X delivers it."""
    viewport = view.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(viewport.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, event)


def pick_tensors(window) -> tuple[int, list[int]]:
    """(the tensor selected into the empty inspector, the ones selected one after
    another): badges in view, of every rank there, 3-D ones first."""
    view = window.graph
    values = window.session.graph.values
    badges = [b for b in view.badges if b.value_id is not None]
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    shown = [b.value_id for b in badges if visible.contains(b.sceneBoundingRect())]
    shown = list(dict.fromkeys(shown)) or [b.value_id for b in badges]

    def rank(v):
        return len(values[v].shape or ())

    by_rank: dict[int, list[int]] = {}
    for v in shown:
        by_rank.setdefault(rank(v), []).append(v)
    first = (by_rank.get(3) or by_rank[max(by_rank)])[0]
    rest = [v for v in shown if v != first]
    # one of each rank (highest first), then others spread over the view
    chosen = [vs[-1] for r, vs in sorted(by_rank.items(), reverse=True) if vs[-1] != first]
    step = max(1, len(rest) // SELECTIONS)
    for v in rest[::step]:
        if len(chosen) >= SELECTIONS:
            break
        if v not in chosen:
            chosen.append(v)
    return first, chosen[:SELECTIONS]


def measure(app, window, first: int, tensors: list[int], scopes: list[str]) -> dict[str, float]:
    """Label -> KiB for each action, in the window's current mode."""
    view = window.graph
    values = window.session.graph.values
    out: dict[str, float] = {}

    def select(value_id):
        # the badges are redrawn on unfolding: find this tensor's badge now
        view.scene().clearSelection()
        view.badge_for(value_id).setSelected(True)

    def name(v):
        return f"{values[v].display_name} {tuple(values[v].shape or ())}"

    def empty() -> None:
        # the inspector and the Provenance dock empty, as when the window opened
        view.scene().clearSelection()
        window.selection.select_value(None)
        window._refresh_inspector()
        window.timeline.select(None)
        settle(app)

    empty()
    label = f"select into the empty inspector: {name(first)}"
    out[label] = cost(app, window, lambda: select(first), label=label)
    # what each dock draws of that selection, alone (no target: their sum is the
    # selection's, less the Source dock and the graph's outline)
    value = values[first]
    for dock, show in (
        ("Tensor", lambda: window._show_inspector(value)),
        ("Provenance", lambda: window.timeline.select(first)),
    ):
        empty()
        label = f"  of which the {dock} dock alone"
        out[label] = cost(app, window, show, label=label)
    empty()
    select(first)  # as the first selection left it, for the next ones
    settle(app)
    for v in tensors:
        label = f"select {name(v)}"
        out[label] = cost(app, window, lambda v=v: select(v), label=label)

    # steps as playing makes them (the window's timer is stopped: ticks come from here)
    pb = window.timeline.playback
    pb.seek(len(pb) // 3)
    settle(app)
    pb.play()
    window.timeline.timer.stop()

    def tick():
        pb.tick(1.0 / pb.speed)
        window.timeline.timer.stop()

    steps = [cost(app, window, tick, 0.2) for _ in range(STEPS)]
    pb.pause()
    pb.reset()
    settle(app)
    out[f"one playback step (median of {STEPS})"] = statistics.median(steps)
    out["one playback step (largest)"] = max(steps)

    for path in scopes:
        label = f"unfold one scope ({path})"
        out[label] = cost(app, window, lambda path=path: view.set_expanded(path, True), label=label)
        view.set_expanded(path, False)
        settle(app)
    transform = view.transform()
    centre = view.mapToScene(view.viewport().rect().center())
    label = "zoom in (one wheel notch over the graph)"
    out[label] = cost(app, window, lambda: wheel(view), label=label)
    view.setTransform(transform)
    view.centerOn(centre)
    settle(app)
    out["idle 2 s"] = cost(app, window, lambda: None, 2.0)

    busy = window.folding.indicator
    # a window on a display that looks remote (x11bytes's names a host) keeps the bar
    # still: here it is made to move, then kept still as over ssh
    busy.still = False
    busy.show("Unfolding every scope")
    settle(app, 0.5)
    out["busy indicator 2 s, its bar moving (no target)"] = cost(app, window, lambda: None, 2.0)
    busy.still = True  # as over a remote display
    settle(app, 0.5)
    out["busy indicator 2 s, as over a remote display (no bar)"] = cost(
        app, window, lambda: None, 2.0
    )
    busy.hide()
    settle(app)
    return out


def target_of(label: str) -> float | None:
    if label.startswith("select"):
        return SELECT_KIB
    if label.startswith("unfold"):
        return UNFOLD_KIB
    if label.startswith("one playback step"):
        return STEP_KIB
    if label.startswith("idle") or "remote display" in label:
        return 0.0
    return None


def verdict(kib: float, target: float | None) -> str:
    if target is None:
        return "(no target)"
    if target == 0:
        return f"target     0 KiB  {'met' if kib == 0 else 'NOT met'}"
    ratio = kib / target
    return f"target {target:5.0f} KiB  ratio {ratio:5.2f}  {'met' if ratio <= 1 else 'NOT met'}"


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else "example:transformer"
    from shardscope.app.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=True)
    window.resize(1600, 1000)
    window.show()
    window.open_program(source)
    while window.session.program is None or window.timeline.playback is None:
        app.processEvents()
        time.sleep(0.01)
    view = window.graph
    wait_idle(app, window)
    settle(app, 1.5)
    window.statusBar().clearMessage()
    start = settle(app)

    first, tensors = pick_tensors(window)
    # the first scope (at the top: what it unfolds pushes the whole view down) and the
    # one nearest the middle of the view (a layer: what lies below it moves down)
    folded = [n for n in view.layout_.nodes if n.kind == "scope"]
    middle = view.mapToScene(view.viewport().rect().center())
    nearest = min(folded, key=lambda n: (n.x - middle.x()) ** 2 + (n.y - middle.y()) ** 2)
    scopes = list(dict.fromkeys([folded[0].scope, nearest.scope]))
    print(f"program: {source}, window 1600x1000")
    print(f"open, load, propagate, compile, first paint: {start['to_server'] / 1024:9.1f} KiB")

    counts = measure(app, window, first, tensors, scopes)
    width = max(len(label) for label in counts) + 2
    for label, kib in counts.items():
        floor = FLOORS.get(label)
        beside = f"floor {floor:7.1f} KiB  " if floor is not None else " " * 20
        print(f"  {label:{width}s} {kib:9.1f} KiB  {beside} {verdict(kib, target_of(label))}")
    selects = [label for label in counts if label.startswith("select")]
    worst = max(counts[label] for label in selects)
    print(
        f"\nevery selection at most {SELECT_KIB:.0f} KiB: largest {worst:.1f} KiB, "
        f"ratio {worst / SELECT_KIB:.2f} ({'met' if worst <= SELECT_KIB else 'NOT met'})"
    )
    window.close()


if __name__ == "__main__":
    main()
