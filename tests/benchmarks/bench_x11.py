"""Bytes between the window and the X server, as over ``ssh -X`` (run under x11bytes).

    python3 /work/shared/tools/x11bytes.py -- .venv/bin/python tests/benchmarks/bench_x11.py \
        [SOURCE]

Opens the window on ``SOURCE`` (default ``example:transformer``), lets it load, propagate
and paint, then prints the bytes the app sent to the X server for: selecting one tensor
(a badge click's work: selection, inspector, source), unfolding one scope, and two
seconds of idling. Selecting is measured twice: the first tensor (the inspector opens its
details) and another one after it. Targets: selecting a tensor at most 300 KiB, idle 0.
"""

from __future__ import annotations

import os
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

import x11bytes  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def settle(app, seconds: float = 0.6) -> dict[str, int]:
    """Let Qt paint what the last action caused, then read the settled totals."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)
    return x11bytes.read()


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else "example:transformer"
    from shardscope.app.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=True)
    window.resize(1600, 1000)
    window.show()
    window.open_program(source)
    while window.session.program is None or window.propagation.count == 0:
        app.processEvents()
        time.sleep(0.01)
    view = window.graph
    settle(app, 1.5)
    start = x11bytes.read()

    badges = [b for b in view.badges if b.value_id is not None]
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    shown = [b for b in badges if visible.contains(b.sceneBoundingRect())] or badges
    first, second = shown[0], shown[len(shown) // 2]
    before = settle(app)
    view.scene().clearSelection()
    first.setSelected(True)
    after = settle(app)
    select_first = after["to_server"] - before["to_server"]
    before = after
    view.scene().clearSelection()
    second.setSelected(True)
    after = settle(app)
    select = after["to_server"] - before["to_server"]

    scope = next(n for n in view.layout_.nodes if n.kind == "scope")
    before = after
    view.set_expanded(scope.scope, True)
    after = settle(app)
    unfold = after["to_server"] - before["to_server"]

    before = after
    after = settle(app, 2.0)
    idle = after["to_server"] - before["to_server"]

    print(f"program: {source}, window 1600x1000")
    print(f"open, load, propagate, first paint: {start['to_server'] / 1024:9.1f} KiB")
    print(f"select a tensor (none selected):    {select_first / 1024:9.1f} KiB")
    print(f"select another tensor:              {select / 1024:9.1f} KiB  (target <= 300 KiB)")
    print(f"unfold one scope ({scope.scope}):   {unfold / 1024:9.1f} KiB")
    print(f"idle 2 s:                           {idle / 1024:9.1f} KiB  (target 0)")
    window.close()


if __name__ == "__main__":
    main()
