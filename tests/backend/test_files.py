"""Reading and writing files without blocking, over-reading, recursing or losing one."""

import os
import socket
import stat
import subprocess
import sys
import textwrap

import pytest

from shardscope.backend import files
from shardscope.backend.errors import ProgramError, ShardscopeError
from tests.support.inputs import REPO

FIX = "give another file"


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message and message.endswith(FIX), message
    return message


def test_a_regular_file_is_read_whole(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": [1, 2]}')
    assert files.read_bytes(path, 100, FIX) == b'{"a": [1, 2]}'
    assert files.read_json(path, 100, FIX) == {"a": [1, 2]}
    with pytest.raises(FileNotFoundError):
        files.read_bytes(tmp_path / "missing", 100, FIX)


@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "socket"])
def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "x.json"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would wait forever
        said = "a pipe (FIFO)"
    elif kind == "folder":
        path.mkdir()
        said = "a folder"
    elif kind == "device":
        path.symlink_to("/dev/zero")  # endless: a plain read would never end
        said = "a device"
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        said = "a socket"
    with pytest.raises(ProgramError) as exc:
        files.read_json(path, 100, FIX, what="capture", error=ProgramError)
    message = _one_line(exc)
    assert message.startswith(f"capture {path} is {said}, not a regular file")


def test_a_file_over_its_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b"0," * 3 * files.MiB + b"0]")
    with pytest.raises(ShardscopeError) as exc:
        files.read_json(path, 2 * files.MiB, FIX)
    assert "is 6.0 MiB, over the 2.0 MiB it may be" in _one_line(exc)


@pytest.mark.parametrize("depth", [65, 200_000])
def test_json_nested_too_deep_is_refused_without_recursing(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(ShardscopeError) as exc:
        files.read_json(path, 10 * files.MiB, FIX)
    assert "nests deeper than the 64 levels it may" in _one_line(exc)
    assert files.loads("[" * 64 + "]" * 64, "x", FIX) is not None


@pytest.mark.parametrize(
    "data, said",
    [(b"{nope", "is not JSON (line 1)"), (b'"\xff\xfe"', "is not JSON (not UTF-8 text)")],
)
def test_what_is_not_json_is_one_line(data, said):
    with pytest.raises(ShardscopeError) as exc:
        files.loads(data, "record", FIX)
    assert _one_line(exc).startswith(f"record {said}")


def test_a_text_that_is_not_utf8_is_refused_or_replaced(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"caf\xe9")
    with pytest.raises(ShardscopeError, match="is not UTF-8 text"):
        files.read_text(path, 100, FIX)
    assert files.read_text(path, 100, FIX, errors="replace") == "caf\ufffd"


def test_depth_counts_lists_and_objects():
    assert files.depth(3) == 0
    assert files.depth({"a": [1, {"b": []}]}) == 4


def _write(data: bytes):
    return lambda f: f.write(data)


def test_a_write_replaces_a_regular_file_whole_and_keeps_its_mode(tmp_path):
    path = tmp_path / "out" / "a.json"
    files.write_atomic(path, _write(b"one"), FIX)
    assert path.read_bytes() == b"one"
    os.chmod(path, 0o640)
    files.write_atomic(path, _write(b"two"), FIX)
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(path.parent) == ["a.json"]


def test_a_write_through_a_link_replaces_its_target(tmp_path):
    (tmp_path / "target.json").write_text("old")
    (tmp_path / "link.json").symlink_to("target.json")
    files.write_atomic(tmp_path / "link.json", _write(b"new"), FIX)
    assert (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "target.json").read_text() == "new"


@pytest.mark.parametrize("kind", ["fifo", "folder", "device-link"])
def test_a_write_leaves_what_is_not_a_regular_file_as_it_is(tmp_path, kind):
    path = tmp_path / "out.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("/dev/null")
    before = os.stat(path)
    with pytest.raises(ShardscopeError) as exc:
        files.write_atomic(path, _write(b"data"), FIX)
    assert "not a regular file" in _one_line(exc)
    after = os.stat(path)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (
        before.st_mode,
        before.st_ino,
        before.st_rdev,
    )
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(os.listdir(tmp_path)) == ["out.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old")

    def fails(f):
        f.write(b"half")
        raise ValueError("not serializable")

    with pytest.raises(ValueError):
        files.write_atomic(path, fails, FIX)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.json"]
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(ShardscopeError) as exc:
        files.write_atomic(tmp_path / "a_file" / "b.json", _write(b"x"), FIX)
    assert "a_file is a file, not a folder" in _one_line(exc)


def test_a_write_to_a_full_device_says_why(tmp_path):
    with pytest.raises(ShardscopeError) as exc:
        files.write_atomic("/dev/full", _write(b"x"), FIX)
    assert "a device, not a regular file" in _one_line(exc)


def test_a_private_file_is_its_owners_alone(tmp_path):
    path = tmp_path / "state" / "r.json"
    files.write_atomic(path, _write(b"x"), FIX, private=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_temporary_files_of_killed_writers_are_removed_by_the_next_write(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal
        from shardscope.backend import files

        def die(f):
            f.write(b"half")
            os.kill(os.getpid(), signal.SIGKILL)

        files.write_atomic({str(tmp_path / "a.json")!r}, die, "x")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, timeout=120)
    assert proc.returncode < 0
    assert [n.startswith(files.TEMP_PREFIX) for n in os.listdir(tmp_path)] == [True]
    files.write_atomic(tmp_path / "a.json", _write(b"x"), FIX)
    assert os.listdir(tmp_path) == ["a.json"]


def test_a_long_path_is_quoted_by_its_end(tmp_path):
    path = tmp_path / ("d" * 300) / "missing.json"
    os.mkfifo(tmp_path / "f.json")
    with pytest.raises(ShardscopeError) as exc:
        files.read_bytes(tmp_path / "f.json", 10, FIX)
    assert str(tmp_path) in str(exc.value)
    assert files.shown_path(path).endswith("/missing.json") and len(files.shown_path(path)) < 150


def test_a_link_is_refused_where_links_are_not_followed(tmp_path):
    (tmp_path / "target").write_bytes(b"x")
    (tmp_path / "link").symlink_to("target")
    assert files.read_bytes(tmp_path / "link", 10, FIX) == b"x"
    with pytest.raises(ShardscopeError) as exc:
        files.read_bytes(tmp_path / "link", 10, FIX, follow_links=False)
    assert exc.value.reason == "is a symbolic link, not a regular file"
    assert _one_line(exc).startswith(f"file {tmp_path / 'link'} is a symbolic link")


def test_the_head_of_a_regular_file_only(tmp_path):
    (tmp_path / "a").write_bytes(b"0123456789")
    os.mkfifo(tmp_path / "fifo")
    assert files.read_head(tmp_path / "a", 4) == b"0123"
    assert files.read_head(tmp_path / "fifo", 4) is None
    assert files.read_head("/dev/zero", 4) is None
    assert files.read_head(tmp_path / "missing", 4) is None
