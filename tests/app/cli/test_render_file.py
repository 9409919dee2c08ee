"""Writing what ``render`` draws: all of it or nothing, with a one-line error."""

import pytest

from shardscope.app.cli.main import main
from shardscope.app.cli.render_file import write_out
from shardscope.backend.errors import ShardscopeError


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_a_write_that_fails_midway_is_one_line_and_leaves_no_file(
    suffix, tmp_path, qapp, capsys, monkeypatch
):
    # A full disk: the file gets created, then the write fails.
    import errno

    from shardscope.app.cli import render_file

    def full_disk(path, mode="r", *args, **kwargs):
        if "w" in mode:
            open(path, mode).close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return open(path, mode, *args, **kwargs)

    monkeypatch.setattr(render_file, "open", full_disk, raising=False)
    out = tmp_path / f"g{suffix}"
    assert main(["render", "example:mlp", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write") and "No space left" in err and "\n" not in err
    assert not out.exists()


def test_a_drawing_that_writes_nothing_is_an_error_and_leaves_no_file(tmp_path):
    out = tmp_path / "empty.png"
    with pytest.raises(ShardscopeError, match="Qt wrote nothing"):
        write_out(out, lambda path: path.write_bytes(b""))
    assert not out.exists()


def test_what_is_drawn_reaches_the_file_in_a_new_folder(tmp_path):
    out = tmp_path / "made" / "picture.png"
    write_out(out, lambda path: path.write_bytes(b"drawn"))
    assert out.read_bytes() == b"drawn"
