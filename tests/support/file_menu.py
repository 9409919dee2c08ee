"""Helpers for the window's File tests: file dialogs and prompts answered as a user would,
a window with unsaved edits, what a failed open must leave alone, and programs that mark
each time their code runs."""

import json
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from shardscope.app.window import saving
from tests.support.inputs import write_input


def answer_open(monkeypatch, path):
    """The next Open dialogs return ``path``, as if the user picked it."""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))


def answer_save(monkeypatch, path, asked=None):
    """The next Save dialogs return ``path``; their (caption, suggested name) go to ``asked``."""

    def get_save_file_name(parent, caption, name="", *rest, **kw):
        if asked is not None:
            asked.append((caption, Path(name).name))
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save_file_name)


def answer_unsaved(monkeypatch, button):
    """The unsaved-edits prompt answers ``button``; the prompts shown go to the list returned."""
    monkeypatch.delenv("SHARDSCOPE_UNSAVED", raising=False)
    asked = []

    def ask(parent, title, text):
        asked.append((title, text))
        return button

    monkeypatch.setattr(saving, "ask_unsaved", ask)
    return asked


def edited_mlp(make_window, drop_axis):
    window = make_window("example:mlp", propagate=False)
    x = window.session.graph.value_by_name("x").id
    drop_axis(window, x, 1, "model")
    assert not window.qundo.isClean()
    return window, x


def window_state(window):
    """Everything a failed open must leave alone."""
    return (
        window.windowTitle(),
        window.files.session_path,
        window.session.program,
        json.dumps(window.session.to_json(), sort_keys=True),
        [window.qundo.text(i) for i in range(window.qundo.count())],
        window.qundo.index(),
        window.qundo.isClean(),
    )


def marked_program(folder, scale="2.0"):
    """A program that appends a line to ``ran.txt`` each time its code runs; its path."""
    marker = folder / "ran.txt"
    text = (
        "import jax\n"
        "import jax.numpy as jnp\n"
        f"open({str(marker)!r}, 'a').write('ran\\n')\n"
        "\n"
        "\n"
        "def step(x, w):\n"
        f"    return jnp.tanh(x @ w) * {scale}\n"
        "\n"
        "\n"
        "PROGRAM = step\n"
        "EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),"
        " jax.ShapeDtypeStruct((4, 4), jnp.float32))\n"
        "MESH = {'data': 2, 'model': 2}\n"
        "SPECS = {'x': [None, None]}\n"
    )
    return write_input(folder, "marked.py", text), marker


def runs(marker):
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def spoiled_session(window, spoil: str) -> str:
    """The JSON of ``window``'s session with ``spoil`` put into its saved module's text."""
    state = window.session.to_json()
    mlir = state["program"]["mlir"]
    state["program"]["mlir"] = mlir.replace("func.func", f"func.func{spoil}", 1)
    return json.dumps(state)


SPOILS = [("\udcff", "a lone surrogate \\udcff at line"), ("\x00", "a NUL character at line")]
