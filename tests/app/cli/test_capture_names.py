"""Captured functions whose names hold ``#``, spaces, quotes, ``%``, ``?`` or a newline: the
open command ``capture`` prints works when pasted into a shell, and the name as itself
works after ``FILE#`` too."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from shardscope.app.cli.main import main
from shardscope.backend.program.capture_file import name_in_source
from tests.support.inputs import REPO

NAMED = str(REPO / "tests" / "inputs" / "capture" / "named.py")
NAMES = ["a#b c", "it's 100%", "what?x=1", "%41 x.json#y", "two\nlines"]


def capture(out, name: str) -> str:
    """``capture``'s readable listing of ``named.py`` run with ``name``."""
    done = subprocess.run(
        [
            sys.executable,
            "main.py",
            "capture",
            "--out",
            str(out),
            "--",
            sys.executable,
            NAMED,
            name,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_printed_open_command_works_in_a_shell(tmp_path, name):
    folder = tmp_path / "my captures"
    folder.mkdir()
    out = folder / "c.json"
    (line,) = [s for s in capture(out, name).splitlines() if s.startswith("open one: ")]
    command, gui = line.removeprefix("open one: ").split("  (or gui ")
    assert shlex.split(gui) == [str(out), "to", "choose)"]
    # Pasted as printed: ``python`` is this interpreter.
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
    done = subprocess.run(
        ["bash", "-c", command + " --json"],
        cwd=REPO,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (command, done.stderr)
    result = json.loads(done.stdout)
    shown = name if name.isprintable() else name_in_source(name)
    assert result["program"] == shown and result["mesh"] == {"data": 8}


@pytest.mark.slow
def test_a_name_with_a_hash_opens_as_itself_and_bad_names_list_the_typed_forms(tmp_path, capsys):
    out = tmp_path / "c.json"
    capture(out, "a#b c")
    assert main(["load", "--json", f"{out}#a#b c"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "a#b c"
    assert main(["load", f"{out}#a"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith("no captured function 'a'; choose one of: a%23b c")
