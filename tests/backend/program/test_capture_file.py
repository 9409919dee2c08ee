"""Capture files: their form, checked when read, and picking one function."""

import json

import pytest

from shardscope.backend.errors import ProgramError
from shardscope.backend.program.capture_file import (
    Capture,
    CapturedFunction,
    capture_source,
    is_capture_file,
    name_in_source,
    parse_capture,
    split_capture_source,
)


def sample():
    return Capture(
        ["python", "train.py"],
        8,
        "finished",
        [
            CapturedFunction("small", "jit_small", "module {}", 3, {"data": 8}, "t.py", 4, 2),
            CapturedFunction("big", "jit_big", "module {}", 30, None, None, None, None),
        ],
        {"jit_multiply": 2},
    )


def test_a_written_capture_reads_back_equal_and_is_recognised(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(sample().to_json(), indent=1))
    assert is_capture_file(path)
    assert parse_capture(path.read_text(), "c.json") == sample()
    session = tmp_path / "s.json"
    session.write_text(json.dumps({"format": "shardscope-session", "version": 2}))
    assert not is_capture_file(session) and not is_capture_file(tmp_path / "none.json")


def test_a_capture_keeps_its_host_count_and_warnings_and_old_files_have_one_host():
    capture = sample()
    capture.hosts, capture.warnings = 2, ["host 1 compiled other modules than host 0"]
    read = parse_capture(json.dumps(capture.to_json()), "c.json")
    assert read == capture and read.hosts == 2
    old = {k: v for k, v in sample().to_json().items() if k not in ("hosts", "warnings")}
    read = parse_capture(json.dumps({**old, "version": 1}), "c.json")
    assert read.hosts == 1 and read.warnings == []


def test_picking_by_name_or_the_largest():
    capture = sample()
    assert capture.pick(None, "c.json").name == "big"
    assert capture.pick("small", "c.json").ops == 3
    with pytest.raises(ProgramError, match="no captured function 'x'; choose one of: small, big"):
        capture.pick("x", "c.json")
    with pytest.raises(ProgramError, match="holds no function"):
        Capture([], 1, "finished").pick(None, "c.json")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"version": 9}, "version 9"),
        ({"functions": {}}, "functions are not a list"),
        ({"functions": [3]}, "function 0 is not an object"),
        ({"functions": [{"name": "f"}]}, "unknown or missing fields"),
        (
            {"functions": [{"name": 1, "module": "m", "mlir": "", "ops": 1}]},
            "name that is not text",
        ),
        ({"functions": [{"name": "f", "module": "m", "mlir": "", "ops": "1"}]}, "op count"),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "", "ops": 1, "line": "12"}]},
            "function 0 has a line that is not a whole number",
        ),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "", "ops": 1, "calls": 1.5}]},
            "function 0 has a calls that is not a whole number",
        ),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "", "ops": 1, "file": 5}]},
            "function 0 has a file that is not text",
        ),
        (
            {
                "functions": [
                    {"name": "f", "module": "m", "mlir": "", "ops": 1, "compiled_hlo": "junk {"}
                ]
            },
            "function 0 has a compiled module that is not XLA's HLO text",
        ),
        ({"skipped": json.loads('{"m": ' + "[" * 70 + "]" * 70 + "}")}, "nests deeper than"),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "", "ops": 1, "mesh": {"a": 0}}]},
            "mesh",
        ),
        ({"devices": "8"}, "malformed"),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "module {\n\udcff}", "ops": 1}]},
            r"function 0 \('f'\) has module text with a lone surrogate \\udcff at line 2",
        ),
        (
            {"functions": [{"name": "f", "module": "m", "mlir": "module {}\x00", "ops": 1}]},
            "a NUL character at line 1, which MLIR does not read",
        ),
        (
            {"functions": [{"name": "f\udcff", "module": "m", "mlir": "", "ops": 1}]},
            "a name that is not UTF-8 text",
        ),
        ({"command": ["python", "t\udcff.py"]}, "not UTF-8 text"),
        ({"hosts": 3}, "host count 3 is not a whole number that divides its devices"),
        ({"hosts": "2"}, "host count '2'"),
        ({"warnings": "x"}, "warnings are not lines of text"),
    ],
)
def test_a_malformed_capture_is_one_line_naming_the_fix(change, problem):
    data = {**sample().to_json(), **change}
    with pytest.raises(ProgramError, match=problem) as info:
        parse_capture(json.dumps(data), "c.json")
    assert "capture the script again" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ProgramError, match="not a capture file"):
        parse_capture("[1]", "c.json")
    with pytest.raises(ProgramError, match="not JSON"):
        parse_capture("{", "c.json")
    with pytest.raises(ProgramError, match="nests deeper than"):
        parse_capture('{"format": ' + "[" * 200_000 + "]" * 200_000 + "}", "c.json")


def test_sources_name_a_function_after_a_hash():
    assert split_capture_source("c.json#loss") == ("c.json", "loss")
    assert split_capture_source("c.json#") == ("c.json", None)
    assert split_capture_source("c.json") == ("c.json", None)
    assert split_capture_source("c.json#a#b c") == ("c.json", "a#b c")


def test_the_file_ends_at_the_first_json_hash_that_names_a_file(tmp_path):
    folder = tmp_path / "x.json#y"
    folder.mkdir()
    (folder / "c.json").write_text("{}")
    assert split_capture_source(f"{folder}/c.json#f") == (f"{folder}/c.json", "f")
    assert split_capture_source(f"{folder}/c.json#f.json#g") == (f"{folder}/c.json", "f.json#g")


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("loss.2", "loss.2"),
        ("a#b c", "a%23b c"),
        ("it's 100%", "it's 100%25"),
        ("what?x=1", "what%3Fx=1"),
        ("two\nlines\x00", "two%0Alines%00"),
        ("é/…", "é/…"),
    ],
)
def test_a_name_is_written_percent_encoded_where_it_must_and_picked_back_either_way(name, written):
    assert name_in_source(name) == written
    assert capture_source("c.json", name) == f"c.json#{written}"
    capture = Capture([], 1, "finished", [CapturedFunction(name, "m", "", 1)])
    assert capture.pick(written, "c.json").name == name
    assert capture.pick(name, "c.json").name == name


def test_a_name_spelled_both_ways_picks_the_function_called_that_first():
    functions = [CapturedFunction("a%23b", "m", "", 1), CapturedFunction("a#b", "m", "", 2)]
    capture = Capture([], 1, "finished", functions)
    assert capture.pick("a%23b", "c.json").ops == 1
    assert capture.pick("a%2523b", "c.json").ops == 1
    assert capture.pick("a#b", "c.json").ops == 2
    with pytest.raises(ProgramError, match=r"choose one of: a%2523b, a%23b$"):
        capture.pick("a%ff", "c.json")
