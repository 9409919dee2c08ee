"""Writing what ``render`` draws: all of it or nothing, with a one-line error."""

import pytest

from shardscope.app.cli.main import main
from shardscope.app.cli.render_file import write_out
from shardscope.backend.errors import ShardscopeError


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_a_write_that_fails_midway_is_one_line_and_leaves_no_file(
    suffix, tmp_path, qapp, capsys, monkeypatch
):
    # A full disk: the file gets created, then writing it out fails.
    import errno
    import os

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    out = tmp_path / f"g{suffix}"
    assert main(["render", "example:mlp", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write") and "No space left" in err and "\n" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_drawing_that_writes_nothing_is_an_error_and_leaves_no_file(tmp_path):
    out = tmp_path / "empty.png"
    with pytest.raises(ShardscopeError, match="nothing was drawn"):
        write_out(out, lambda path: path.write_bytes(b""))
    assert not out.exists()


def test_what_is_drawn_reaches_the_file_in_a_new_folder(tmp_path):
    out = tmp_path / "made" / "picture.png"
    write_out(out, lambda path: path.write_bytes(b"drawn"))
    assert out.read_bytes() == b"drawn"


def test_a_pipe_or_device_named_as_out_is_refused_and_left_as_it_is(tmp_path, capsys):
    import os
    import stat

    fifo = tmp_path / "g.png"
    os.mkfifo(fifo)  # no reader: a plain open for writing would wait forever
    device = tmp_path / "null.svg"
    device.symlink_to("/dev/null")
    for out in (fifo, device):
        assert main(["render", "example:mlp", "--out", str(out)]) == 1
        err = capsys.readouterr().err.strip()
        assert "not a regular file" in err and "\n" not in err, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.stat(device).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.png", "null.svg"]
