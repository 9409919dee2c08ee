"""``python main.py load``: JSON and text summaries, one-line errors."""

import json

from shardscope.app.cli.main import main


def test_load_json(capsys):
    assert main(["load", "example:conflict", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["name"] == "conflict" and info["kind"] == "example"
    names = {v["name"]: v for v in info["values"]}
    assert names["x"]["shape"] == [16, 32] and names["x"]["role"] == "arg"
    assert names["result[0]"]["role"] == "result"
    assert info["specs"] == {"x": ["data", None], "y": ["model", None]}


def test_load_text(capsys):
    assert main(["load", "example:scan"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scan (example,") and "h0" in out and "rnn" in out


def test_bad_input_is_one_line_and_nonzero(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    cases = [str(tmp_path / "missing.py"), str(bad), "example:nope"]
    for source in cases:
        assert main(["load", source]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, err
