"""Runs on 2 hosts that fail: a host that raises, is killed, hangs or freezes ends the whole
run within 30 s in one line naming it, and none of the run's processes is left; two runs
at once; a cancelled run; host counts that do not divide the mesh; the hang detector's
rule on stages."""

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from shardscope.backend.errors import MeshError, ShardscopeError
from shardscope.backend.program.load import load_program
from shardscope.backend.run.cancel import Cancel, RunCancelled
from shardscope.backend.run.dispatch import run, run_program
from shardscope.backend.run.hosts_run import LAG_S, HostFailed, _Host, _hung, free_port
from shardscope.backend.run.request import ProgramFile, RunRequest
from shardscope.backend.sharding.mesh import Mesh
from tests.support.inputs import INPUTS

HOSTS = INPUTS / "hosts"


def _copy(tmp_path: Path, name: str) -> Path:
    """The fixture in a folder of its own: the run's workers work there (their cwd), which
    tells them from every other process on the machine."""
    folder = tmp_path / name.removesuffix(".py")
    folder.mkdir()
    return Path(shutil.copy(HOSTS / name, folder))


def _in(folder: Path) -> list[int]:
    """Live processes whose working folder is ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cwd == folder and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _children() -> list[int]:
    """Live children of this process."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def _nothing_left(folder: Path, before: set[int]) -> None:
    deadline = time.monotonic() + 5
    while (_in(folder) or set(_children()) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _in(folder) == []
    assert set(_children()) - before == set()


def _source(path: Path, **options):
    program = ProgramFile(path, {}, name=path.stem, source=str(path), kind="python")
    return run(RunRequest(program, runs=1, **options)).result


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("fixture", "line"),
    [
        (
            "raises.py",
            r"^host 1 of 2: .*raises\.py:10: ValueError: host 1 refuses to trace",
        ),
        ("killed.py", r"^host 1 of 2 was killed \(SIGKILL\)$"),
        (
            "hangs.py",
            r'^host 1 of 2 stopped responding: host 0 reached "lower" \d+ s ago and host 1 '
            r"has not$",
        ),
        (
            "frozen.py",
            r"^host 1 of 2 stopped responding \(it is stopped: SIGSTOP\): host 0 lost contact "
            r"with it \(the distributed runtime saw its heartbeats stop\)$",
        ),
    ],
)
def test_a_failing_host_ends_the_run_in_one_line_naming_it(tmp_path, fixture, line):
    path = _copy(tmp_path, fixture)
    before = set(_children())
    started = time.monotonic()
    with pytest.raises(ShardscopeError, match=line) as caught:
        _source(path, hosts=2, timeout=120)
    assert time.monotonic() - started < 30
    assert "\n" not in str(caught.value)
    _nothing_left(path.parent, before)


@pytest.mark.slow
def test_two_runs_at_once_each_run_on_their_own_hosts(tmp_path):
    paths = []
    for i in range(2):
        (tmp_path / str(i)).mkdir()
        paths.append(_copy(tmp_path / str(i), "two_axes.py"))
    results: list = [None, None]

    def run(i: int) -> None:
        try:
            results[i] = _source(paths[i], hosts=2, timeout=120)
        except BaseException as exc:  # noqa: BLE001 - the test reads what was raised
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    for result in results:
        assert not isinstance(result, BaseException), result
        assert result.hosts == 2
        assert [c.crosses_hosts for c in result.collectives] == [False, True]
    assert results[0].tensor("result[1]").shards == results[1].tensor("result[1]").shards


@pytest.mark.slow
def test_a_cancelled_run_ends_every_host(tmp_path):
    path = _copy(tmp_path, "hangs.py")
    program = load_program(str(path))
    cancel = Cancel()
    raised: list[BaseException] = []
    before = set(_children())

    def run() -> None:
        try:
            run_program(program, hosts=2, cancel=cancel, timeout=120)
        except BaseException as exc:  # noqa: BLE001 - the test reads what was raised
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while len(_in(path.parent)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_in(path.parent)) >= 2, "the hosts never started"
    cancel.cancel()
    thread.join(30)
    assert not thread.is_alive(), "the run did not end once cancelled"
    assert len(raised) == 1 and isinstance(raised[0], RunCancelled), raised
    _nothing_left(path.parent, before)


def test_a_host_count_that_does_not_divide_the_given_mesh_is_refused_before_anything_starts():
    before = set(_children())
    with pytest.raises(MeshError, match="^the mesh's 8 devices do not split evenly among 3 hosts"):
        _source(HOSTS / "two_axes.py", mesh=Mesh.from_dict({"data": 2, "model": 4}), hosts=3)
    assert set(_children()) == before


@pytest.mark.slow
def test_a_host_count_that_does_not_divide_the_programs_own_mesh_is_one_line(tmp_path):
    path = _copy(tmp_path, "two_axes.py")
    with pytest.raises(ShardscopeError) as caught:
        _source(path, hosts=3, timeout=120)
    assert str(caught.value) == (
        "the mesh's 8 devices do not split evenly among 3 hosts: give a host count that divides 8"
    )


def _hosts(tmp_path: Path, count: int) -> list[_Host]:
    out = []
    for k in range(count):
        folder = tmp_path / f"host-{k}"
        folder.mkdir()
        out.append(_Host(k, count, folder, {"stage_file": str(folder / "stages")}))
    return out


def test_a_host_is_hung_once_another_reached_a_stage_it_has_not_lag_s_before(tmp_path):
    hosts = _hosts(tmp_path, 2)
    start = 100.0
    for h in hosts:
        h.seen = {"initialize": start + 1, "import_program": start + 2}
    hosts[0].seen["lower"] = start + 3
    assert _hung(hosts, start, start + 3 + LAG_S - 1) is None
    line = _hung(hosts, start, start + 3 + LAG_S + 1)
    assert line == (
        f'host 1 of 2 stopped responding: host 0 reached "lower" {LAG_S + 1:.0f} s ago and '
        f"host 1 has not"
    )
    hosts[1].ended = start + 4  # a host that ended is not hung: its end says why
    assert _hung(hosts, start, start + 3 + LAG_S + 1) is None


def test_a_long_stage_allows_a_longer_lag(tmp_path):
    hosts = _hosts(tmp_path, 2)
    start = 0.0
    for h in hosts:
        h.seen = {"initialize": 1.0, "trace_and_lower": 2.0}
    hosts[0].seen["compile"] = 200.0  # reached 200 s after the start: half that is allowed
    assert _hung(hosts, start, 200.0 + 99.0) is None
    assert _hung(hosts, start, 200.0 + 101.0) is not None


def test_stages_after_the_runs_are_not_watched(tmp_path):
    hosts = _hosts(tmp_path, 2)
    for h in hosts:
        h.seen = {s: 1.0 for s in ("initialize", "trace_and_lower", "compile", "run")}
    hosts[1].seen["shards"] = 2.0  # host 0 reads the collectives and waits for Shardy
    assert _hung(hosts, 0.0, 1000.0) is None


def test_ports_come_from_the_system():
    ports = {free_port() for _ in range(5)}
    assert all(1024 <= p < 65536 for p in ports)
    assert len(ports) > 1
    assert issubclass(HostFailed, ShardscopeError)


def test_a_run_cancelled_before_it_starts_starts_no_host(tmp_path):
    from shardscope.backend.run.hosts_run import run_hosts

    cancel = Cancel()
    cancel.cancel()
    before = set(_children())
    with pytest.raises(RunCancelled):
        run_hosts({"path": "never.py"}, 2, timeout=60, cwd=tmp_path, env={}, cancel=cancel)
    assert set(_children()) == before
