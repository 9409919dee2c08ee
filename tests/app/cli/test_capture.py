"""``python main.py capture``: a script's jitted functions into a file the other commands open."""

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid

import pytest

from shardscope.app.cli.capture import default_out
from shardscope.app.cli.main import main
from shardscope.backend.program.capture_file import name_in_source
from tests.support.inputs import REPO
from tests.support.processes import alive, gone_within
from tests.test_hostile import MARKER, _marked_pids

TRAIN = str(REPO / "tests" / "inputs" / "capture" / "train.py")


@pytest.mark.slow
def test_capture_then_propagate_a_captured_function(capsys, tmp_path):
    out = tmp_path / "train.json"
    argv = ["capture", "--json", "--out", str(out), "--", sys.executable, TRAIN, "2"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out"] == str(out) and summary["ended"] == "finished"
    assert {f["name"]: f["calls"] for f in summary["functions"]} == {"loss": 2, "predict": 1}
    assert all("mlir" not in f for f in summary["functions"])

    assert main(["propagate", f"{out}#predict", "--json"]) == 0
    values = {v["name"]: v for v in json.loads(capsys.readouterr().out)["values"] if v["name"]}
    assert values["w"]["spec"] == [[], ["model"]] and values["x"]["spec"] == [["data"], []]
    assert values["result[0]"]["spec"] == [["data"], ["model"]]

    assert main(["load", str(out)]) == 0
    assert capsys.readouterr().out.startswith("loss (capture,")


@pytest.mark.slow
def test_the_readable_listing_names_the_file_and_how_to_open_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["capture", "--steps", "1", "--", sys.executable, TRAIN]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("(stopped after --steps) into capture-train.json:")
    assert "open one: python main.py propagate 'capture-train.json#loss'" in out
    assert (tmp_path / "capture-train.json").exists()
    assert default_out([sys.executable, TRAIN]).name == "capture-train-2.json"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["capture"], "no command to capture"),
        (["capture", "--"], "no command to capture"),
        (["capture", "--out", "c.txt", "--", "python", "x.py"], "ends in .json"),
        (["capture", "--", "no-such-command-here", "x.py"], "no such command"),
        (["capture", "--hosts", "3", "--", "python", "x.py"], "that divides --devices 8"),
    ],
)
def test_bad_capture_requests_are_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("devices", ["0", "-1", "x", "٤", "99999"])
def test_bad_device_counts_are_refused_by_the_parser(capsys, devices):
    with pytest.raises(SystemExit) as info:
        main(["capture", "--devices", devices, "--", "python", "x.py"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--devices" in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_capture_on_two_hosts_lists_them_and_the_processes_output(capfd, tmp_path):
    out = tmp_path / "hosts.json"
    script = str(REPO / "tests" / "inputs" / "hosts" / "train.py")
    assert main(["capture", "--hosts", "2", "--out", str(out), "--", sys.executable, script]) == 0
    printed, err = capfd.readouterr()
    assert f"on 2 hosts (4 devices each) (finished) into {out}:" in printed.splitlines()[0]
    assert "[host 0] process 0 of 2: loss" in err and "[host 1] process 1 of 2: loss" in err
    assert json.loads(out.read_text())["hosts"] == 2


SETSID = str(REPO / "tests" / "inputs" / "hostile" / "setsid_child.py")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["finished", "steps", "timeout", "ctrl+c"])
def test_nothing_the_script_started_outlives_capture(tmp_path, how):
    # The script's children each run in a session of their own, one with an environment
    # of its own: neither the process group nor an inherited marker reaches that one.
    marker = uuid.uuid4().hex
    pids = tmp_path / "pids.txt"
    options = {"finished": [], "steps": ["--steps", "1"], "timeout": ["--timeout", "8"]}
    script = [
        sys.executable,
        SETSID,
        str(pids),
        *(["hang"] if how in ("timeout", "ctrl+c") else []),
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "main.py"),
            "capture",
            "--out",
            str(tmp_path / "c.json"),
            *options.get(how, []),
            "--",
            *script,
        ],
        cwd=tmp_path,
        env=dict(os.environ, **{MARKER: marker}),
        stdin=subprocess.DEVNULL,
        # Files, not pipes: a child left running would hold a pipe open.
        stdout=(tmp_path / "out.txt").open("w"),
        stderr=(tmp_path / "err.txt").open("w"),
    )
    try:
        if how == "ctrl+c":
            deadline = time.monotonic() + 60
            while not pids.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(2)  # the script compiles, then hangs
            proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
        out, err = (tmp_path / "out.txt").read_text(), (tmp_path / "err.txt").read_text()
        ended = {
            "finished": "finished",
            "steps": "stopped after --steps",
            "timeout": "stopped after 8 s (--timeout)",
        }
        if how in ended:
            # Killed at --timeout while it hangs, the script keeps the function it
            # compiled and the runs it counted.
            assert code == 0, err
            assert f"({ended[how]})" in out
            kept = json.loads((tmp_path / "c.json").read_text())
            (function,) = kept["functions"]
            assert function["calls"] == (1 if how == "steps" else 3), function
        else:
            assert code == 130 and "interrupted (Ctrl+C)" in err, err
        children = [int(p) for p in pids.read_text().split()]
        assert len(children) == 3
        assert all(gone_within(pid, 5) for pid in children), [p for p in children if alive(p)]
        assert not _marked_pids(marker)
    finally:
        proc.kill()
        proc.wait()
        for pid in _marked_pids(marker) + [
            int(p) for p in (pids.read_text().split() if pids.exists() else [])
        ]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- names with #, spaces, quotes, %, ? or a newline: the printed open command works in a shell

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
