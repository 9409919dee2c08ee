"""Source lines kept with a program: the lines around its ops, bounded, read back checked."""

import pytest

from shardscope.backend.program import snippets
from shardscope.backend.program.snippets import check_snippets, read_snippets, snippet_text
from tests.support.inputs import write_input


def test_lines_around_each_location_are_kept_at_their_numbers(tmp_path):
    path = write_input(tmp_path, "f.py", "".join(f"line {n}\n" for n in range(1, 101)))
    kept = read_snippets([(str(path), 50), (str(path), 52), (None, 3), (str(path), None)])
    lines = kept[str(path)]
    assert min(lines) == 50 - snippets.CONTEXT and max(lines) == 52 + snippets.CONTEXT
    assert lines[50] == "line 50" and 10 not in lines
    text = snippet_text(lines).split("\n")
    assert text[49] == "line 50" and text[0] == "" and len(text) == 52 + snippets.CONTEXT


def test_files_that_cannot_be_shown_are_left_out(tmp_path, monkeypatch):
    binary = tmp_path / "b.py"
    binary.write_bytes(b"\xff\xfe\x00")
    kept = read_snippets([(str(binary), 1), (str(tmp_path / "gone.py"), 1), (str(tmp_path), 1)])
    assert kept == {}
    monkeypatch.setattr(snippets, "MAX_BYTES", 10)
    big = write_input(tmp_path, "big.py", "x = 1\n" * 50)
    assert read_snippets([(str(big), 25)]) == {}


def test_saved_lines_are_read_back_with_numbers_and_checked():
    assert check_snippets({"f.py": {"3": "a", "10": "b"}}) == {"f.py": {3: "a", 10: "b"}}
    for bad in ([], {"f.py": []}, {"f.py": {"-1": "a"}}, {"f.py": {"٣": "a"}}, {"f.py": {"1": 1}}):
        with pytest.raises(ValueError):
            check_snippets(bad)
