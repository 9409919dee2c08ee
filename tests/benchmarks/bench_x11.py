"""Bytes between the window and the X server, as over ``ssh -X`` (run under x11bytes).

    python3 /work/shared/tools/x11bytes.py -- .venv/bin/python tests/benchmarks/bench_x11.py \
        [SOURCE]

Opens the window on ``SOURCE`` (default ``example:transformer``) at 1600x1000, lets it
load, propagate and paint, then measures in this one run, first in normal mode and then
in low-bandwidth mode (View > Low-bandwidth mode), the bytes the app sent to the X server
for: selecting a tensor (a badge click's work: selection, inspector, provenance, source;
median over the same four selections in both modes, each from the tensor before), one
playback step (median of 12, as the playing timer makes them), unfolding one scope, and
two seconds of idling. Prints each count with its target and the ratio (count / target;
at most 1 meets it). Targets: a playback step at most 150 KiB, selecting a tensor at most
300 KiB, idle 0.
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
os.environ.pop("SHARDSCOPE_LOW_BANDWIDTH", None)

import x11bytes  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SELECT_KIB = 300.0
STEP_KIB = 150.0
SELECTIONS = 4
STEPS = 12


def settle(app, seconds: float = 0.6) -> dict[str, int]:
    """Let Qt paint what the last action caused, then read the settled totals."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    return x11bytes.read()


def cost(app, action, seconds: float = 0.6) -> float:
    """KiB sent to the X server for ``action`` and the painting it causes."""
    before = settle(app, 0.2)
    action()
    after = settle(app, seconds)
    return (after["to_server"] - before["to_server"]) / 1024


def line(mode: str, label: str, kib: float, target: float | None) -> str:
    text = f"{mode:14s} {label:36s} {kib:9.1f} KiB"
    if target is None:
        return text
    if target == 0:
        return text + f"   target     0 KiB  {'met' if kib == 0 else 'NOT met'}"
    return text + f"   target {target:5.0f} KiB  ratio {kib / target:5.2f}"


def measure(app, window, mode: str, tensors: list, scope: str) -> list[str]:
    view = window.graph
    pb = window.timeline.playback
    out = []

    def select(value_id):
        # the badges are redrawn on unfolding: find this tensor's badge now
        view.scene().clearSelection()
        view.badge_for(value_id).setSelected(True)

    cost(app, lambda: select(tensors[0]))
    selects = [cost(app, lambda v=v: select(v)) for v in tensors[1:]]
    out.append(
        line(
            mode,
            f"select a tensor (median of {len(selects)})",
            statistics.median(selects),
            SELECT_KIB,
        )
    )
    out.append(line(mode, "select a tensor (largest)", max(selects), SELECT_KIB))
    graph = window.session.graph
    each = ", ".join(
        f"{graph.values[v].display_name} {tuple(graph.values[v].shape)} {kib:.0f}"
        for v, kib in zip(tensors[1:], selects, strict=True)
    )
    out.append(f"{mode:14s} each selection (KiB): {each}")

    # steps as playing makes them (the window's timer is stopped: ticks come from here)
    pb.seek(len(pb) // 3)
    settle(app)
    pb.play()
    window.timeline.timer.stop()

    def tick():
        pb.tick(1.0 / pb.speed)
        window.timeline.timer.stop()

    steps = [cost(app, tick, 0.2) for _ in range(STEPS)]
    pb.pause()
    pb.reset()
    settle(app)
    out.append(
        line(mode, f"one playback step (median of {STEPS})", statistics.median(steps), STEP_KIB)
    )
    out.append(line(mode, "one playback step (largest)", max(steps), STEP_KIB))

    out.append(
        line(
            mode,
            f"unfold one scope ({scope})",
            cost(app, lambda: view.set_expanded(scope, True)),
            None,
        )
    )
    view.set_expanded(scope, False)
    settle(app)
    out.append(line(mode, "idle 2 s", cost(app, lambda: None, 2.0), 0))
    return out


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
    window.bandwidth.set_on(False)
    settle(app, 1.5)
    window.statusBar().clearMessage()
    start = settle(app)

    badges = [b for b in view.badges if b.value_id is not None]
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    shown = [b for b in badges if visible.contains(b.sceneBoundingRect())] or badges
    step = max(1, len(shown) // (SELECTIONS + 1))
    tensors = [b.value_id for b in shown[::step][: SELECTIONS + 1]]
    scope = next(n for n in view.layout_.nodes if n.kind == "scope").scope

    print(f"program: {source}, window 1600x1000, {len(shown)} tensors in view")
    print(f"open, load, propagate, first paint: {start['to_server'] / 1024:9.1f} KiB")
    first = cost(app, lambda: view.badge_for(tensors[-1]).setSelected(True))
    value = window.session.graph.values[tensors[-1]]
    label = f"select a tensor (inspector empty: {value.display_name})"
    print(line("normal", label, first, SELECT_KIB))
    rows = measure(app, window, "normal", tensors, scope)
    switch = cost(app, lambda: window.bandwidth.set_on(True), 1.0)
    window.statusBar().clearMessage()
    settle(app)
    rows.append(line("low-bandwidth", "turning the mode on (one full repaint)", switch, None))
    rows += measure(app, window, "low-bandwidth", tensors, scope)
    for row in rows:
        print(row)
    window.close()


if __name__ == "__main__":
    main()
