"""File > Export propagation animation of one layer of the 24-layer transformer (run as a
script, not collected by pytest).

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_export.py

Opens the program in the window, selects one layer's folded box on the graph, and exports
the animation the way the menu's dialog does with its defaults (that scope, unfolded, at
the narrowest width with legible labels): the seconds from the start of the export to the
file written, its megabytes, its frame count and size, and the smallest label's height in
pixels in the frames written (the graph's smallest font at the frames' real scale: the
GIF's width over the scope's width), each against the issue's target (60 s, 20 MB, 9 px)
with its ratio. Then ``render --animate --scope`` in a fresh process, load and
propagation included.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("SHARDSCOPE_UNSAVED", "discard")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SOURCE = "example:transformer?layers=24"
LAYER = "jvp(layer_3)"
TARGET_S, TARGET_MB, TARGET_PX = 60.0, 20.0, 9.0


def _wait(app, until, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not until():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        app.processEvents()
        time.sleep(0.002)


def _line(name: str, value: float, target: float, unit: str, most: bool) -> None:
    ratio = value / target
    ok = ratio <= 1 if most else ratio >= 1
    word = "at most" if most else "at least"
    print(
        f"{name:<28} {value:9.2f} {unit:<3} target {word} {target:g} {unit}: "
        f"ratio {ratio:.2f} ({'meets' if ok else 'MISSES'})"
    )


def window_export(out: Path) -> None:
    from PIL import Image, ImageSequence
    from PySide6.QtWidgets import QApplication

    from shardscope.app.window.main_window import MainWindow
    from shardscope.viewers.graph.items import NodeItem
    from shardscope.viewers.graph.pages import label_pixels

    app = QApplication.instance() or QApplication([])
    window = MainWindow(auto_propagate=True)
    window.resize(1600, 1000)
    window.show()
    t = time.perf_counter()
    window.open_program(SOURCE)
    _wait(app, lambda: window.propagation.count > 0, 300)
    print(f"open and propagate {SOURCE}: {time.perf_counter() - t:.1f} s")
    box = next(i for i in window.graph.nodes if isinstance(i, NodeItem) and i.node.scope == LAYER)
    window.graph.scene().clearSelection()
    box.setSelected(True)
    export = window.gif_export
    t = time.perf_counter()
    export.ask()
    dialog = export.dialog
    plan = dialog.plan
    print(f"dialog for {dialog.scope_box.currentText()}: {dialog.info.text()}")
    planned = time.perf_counter() - t
    choice = dialog.take()
    dialog.reject()
    ended = []
    export.finished.connect(ended.append)
    t = time.perf_counter()
    export._start(out, choice.view, choice.markers, plan, dialog.playback)
    _wait(app, lambda: ended, 600)
    seconds = time.perf_counter() - t
    assert ended == [True], window.messages.messages("error")
    with Image.open(out) as gif:
        width, height = gif.size
        frames = sum(1 for _ in ImageSequence.Iterator(gif))
    megabytes = out.stat().st_size / 1e6
    # the smallest font's height at the frames' real scale
    label = label_pixels(window.graph, width / plan.source.width())
    print(f"{frames} frames of {width}x{height} px ({plan.shown_steps} of the timeline's")
    print(f"  {plan.all_steps} steps change the layer; planned in {planned:.2f} s)")
    _line("export seconds", seconds, TARGET_S, "s", True)
    _line("file size", megabytes, TARGET_MB, "MB", True)
    _line("smallest label height", label, TARGET_PX, "px", False)
    print(f"estimated {plan.estimate / 1e6:.2f} MB, wrote {megabytes:.2f} MB")
    window.close()
    window.runner.wait(30_000)


def cli_export(out: Path) -> None:
    t = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "main.py",
            "render",
            SOURCE,
            "--animate",
            "--scope",
            LAYER,
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    seconds = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(proc.stderr)
    print(f"render --animate --scope {LAYER!r}, in a fresh process (load and propagation too):")
    _line("render seconds", seconds, TARGET_S, "s", True)
    _line("render file size", out.stat().st_size / 1e6, TARGET_MB, "MB", True)


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        folder = Path(folder)
        window_export(folder / "layer.gif")
        cli_export(folder / "cli.gif")


if __name__ == "__main__":
    main(sys.argv[1:])
