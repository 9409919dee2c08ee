"""``python main.py capture``: a script's jitted functions into a file the other commands open."""

import json
import sys

import pytest

from shardscope.app.cli.capture import default_out
from shardscope.app.cli.main import main
from tests.support.inputs import REPO

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
