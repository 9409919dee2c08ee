"""The hostile-input corpus, run through the command line as a user would.

Every case in tests/inputs/hostile/cases*.json (one file a topic: cases.json for loading
and the commands' options, cases-run.json for running, ...) is one ``python main.py ...``
run in a subprocess. It must either work (exit 0 with output) or fail cleanly: exit 1 or 2 with
one ``error:`` line on stderr. Never a traceback, a death by signal, a hang, or a process
left running after it (each run carries a marker in its environment that every process
it starts inherits, so leftovers are found by that marker).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.inputs import INPUTS, MLIR, PROGRAMS, REPO
from tests.support.processes import alive, gone_within

HOSTILE = INPUTS / "hostile"
CASE_LIMIT_S = 60
MARKER = "SHARDSCOPE_HOSTILE_CASE"


def _cases() -> list[dict]:
    return [
        case
        for path in sorted(HOSTILE.glob("cases*.json"))
        for case in json.loads(path.read_text())["cases"]
    ]


CASES = _cases()


def _make_inputs(tmp: Path) -> None:
    """Inputs that cannot live in the repository: special files, huge or generated ones."""
    (tmp / "folder.mlir").mkdir()
    (tmp / "folder.py").mkdir()
    os.mkfifo(tmp / "fifo.mlir")
    os.mkfifo(tmp / "fifo.py")
    os.mkfifo(tmp / "fifo.json")
    (tmp / "binary.mlir").write_bytes(bytes(range(256)) * 64)
    # Broken Python is written here: in the repository the linters would read it.
    (tmp / "syntax_error.py").write_text('"""Not valid Python."""\n\ndef f(x)\n    return x\n')
    (tmp / "non_utf8.py").write_bytes(b'"""caf\xe9"""\nPROGRAM = 1\n')
    (tmp / "binary.py").write_bytes(b"\x00\x01\x02\xff" * 100)
    depth = 50_000
    loc = 'loc("x")'
    nested = "fused[" * depth + loc + "]" * depth
    (tmp / "deep_fused.mlir").write_text(
        "module {\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        f"    return %arg0 : tensor<8xf32> loc({nested})\n  }}\n}}\n"
    )
    (tmp / "deep_regions.mlir").write_text("module {\n" * 5_000 + "}\n" * 5_000)
    (tmp / "deep_types.mlir").write_text(
        "module {\n  func.func @main(%arg0: "
        + "tuple<" * 20_000
        + "f32"
        + ">" * 20_000
        + ") {\n    return\n  }\n}\n"
    )
    huge = "a" * 4_000_000
    (tmp / "huge_attr.mlir").write_text(
        f'module attributes {{huge.attr = "{huge}"}} {{\n'
        "  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
        "    return %arg0 : tensor<8xf32>\n  }\n}\n"
    )
    (tmp / "zero.mlir").symlink_to("/dev/zero")
    (tmp / "full.svg").symlink_to("/dev/full")
    (tmp / "full.png").symlink_to("/dev/full")
    (tmp / "a_file").write_text("not a folder\n")
    _make_file_inputs(tmp)
    (tmp / "unreadable.py").write_text("PROGRAM = 1\n")
    os.chmod(tmp / "unreadable.py", 0)


def _make_file_inputs(tmp: Path) -> None:
    """What the cases of cases-files.json write to or read: special files to write over
    and captures made from the repository's."""
    os.mkfifo(tmp / "fifo.png")
    os.mkfifo(tmp / "fifo_out.json")
    (tmp / "null.json").symlink_to("/dev/null")
    (tmp / "folder.json").mkdir()
    capture = json.loads((HOSTILE / "capture_text_ok.json").read_text())
    capture["functions"][0]["line"] = "twelve"
    (tmp / "capture_line_text.json").write_text(json.dumps(capture))
    capture["functions"][0]["line"] = None
    capture["warnings"] = ["DEEP"]
    deep = "[" * 200_000 + "]" * 200_000
    (tmp / "capture_deep.json").write_text(json.dumps(capture).replace('"DEEP"', deep))
    block = json.loads((INPUTS / "torch" / "capture_block.json").read_text())
    block["functions"] = block["functions"][:1]
    compiled = block["functions"][0]["compiled_hlo"]
    block["functions"][0]["compiled_hlo"] = re.sub(
        r"replica_groups=\{\{[0-9,{}]*\}\}",
        "replica_groups=[1000000,1000000]<=[1000000000000]",
        compiled,
    )
    (tmp / "capture_huge_groups.json").write_text(json.dumps(block))
    block["functions"][0]["compiled_hlo"] = "garbage\nnot hlo {{{\n"
    (tmp / "capture_garbage_hlo.json").write_text(json.dumps(block))


# ``LONG:TEXT``: TEXT with its last character repeated to 10,000 characters in all.
LONG = 10_000


def _argv(case: dict, tmp: Path) -> list[str]:
    where = {
        "H": str(HOSTILE),
        "T": str(tmp),
        "M": str(MLIR),
        "P": str(PROGRAMS),
        "X": sys.executable,
    }
    out = []
    for arg in case["argv"]:
        arg = arg.format(**where)
        if arg.startswith("LONG:"):
            arg = arg.removeprefix("LONG:")
            arg += arg[-1] * (LONG - len(arg))
        if arg.startswith("LONGPATH:"):
            arg = str(tmp) + "/" + ("x" * 200 + "/") * 25 + arg.removeprefix("LONGPATH:")
        out.append(arg)
    return out


def _marked_pids(marker: str) -> list[int]:
    needle = f"{MARKER}={marker}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            pids.append(int(entry.name))
    return pids


def _run(case: dict, tmp: Path) -> dict:
    marker = uuid.uuid4().hex
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", **{MARKER: marker})
    argv = [sys.executable, str(REPO / "main.py"), *_argv(case, tmp)]
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            cwd=REPO,
            env=env,
            capture_output=True,
            timeout=CASE_LIMIT_S,
            stdin=subprocess.DEVNULL,
        )
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as timed_out:
        code, stdout, stderr = "timeout", timed_out.stdout or b"", timed_out.stderr or b""
    seconds = time.monotonic() - started
    # Workers get a moment to notice their parent is gone before they count as leftovers.
    deadline = time.monotonic() + 5
    left = _marked_pids(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _marked_pids(marker)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return {
        "kinds": {path: _kind(path.format(T=tmp)) for path in case.get("keeps", {})},
        "code": code,
        "stdout": stdout.decode(errors="replace"),
        "stderr": stderr.decode(errors="replace"),
        "left": left,
        "seconds": seconds,
    }


def _kind(path: str) -> str:
    """What ``path`` is (its link's target): fifo, char, folder, file or missing."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode):
        return "char"
    return "folder" if stat.S_ISDIR(mode) else "file"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("hostile")
    _make_inputs(tmp)
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = pool.map(lambda case: _run(case, tmp), CASES)
        return {case["name"]: run for case, run in zip(CASES, runs, strict=True)}


def test_case_names_are_unique():
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))


def _params():
    for case in CASES:
        marks = []
        if "xfail" in case:
            marks.append(pytest.mark.xfail(strict=True, reason=case["xfail"]))
        yield pytest.param(case, id=case["name"], marks=marks)


# The first case's time includes the fixture that runs every case, three at a time.
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("case", list(_params()))
def test_case_works_or_fails_cleanly(case, results):
    run = results[case["name"]]
    said = f"{case['argv']}\nexit {run['code']}\nstdout:\n{run['stdout'][-2000:]}\nstderr:\n{run['stderr'][-2000:]}"
    assert run["code"] != "timeout", "hung: " + said
    assert not run["left"], f"left processes {run['left']}: " + said
    assert "Traceback" not in run["stderr"] + run["stdout"], said
    assert run["code"] in (0, 1, 2), said
    keeps = case.get("keeps", {})
    assert run["kinds"] == keeps, f"files changed: {run['kinds']} where {keeps}: " + said
    longest = max(map(len, (run["stderr"] + run["stdout"]).splitlines()), default=0)
    assert longest <= case.get("max_line", longest), "a line echoes a long input: " + said
    expect = case["expect"]
    if expect == "ok":
        assert run["code"] == 0, said
        assert run["stdout"].strip(), said
        if "--json" in case["argv"]:
            json.loads(run["stdout"])
        assert case.get("stderr", "") in run["stderr"], said
        return
    assert run["code"] in (1, 2), said
    lines = run["stderr"].strip().splitlines()
    if not case.get("multiline"):
        errors = [line for line in lines if line.startswith("error:")]
        assert len(lines[-1]) < 600, "an error line too long to read: " + said
        assert len(errors) == 1 and lines[-1].startswith("error:"), said
    else:
        assert lines and lines[0].startswith("error:"), said
    assert expect.removeprefix("error:").strip().lower() in run["stderr"].lower(), said


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["load", str(HOSTILE / "sleeps.py")],
        ["load", str(HOSTILE / "forks.py")],
        ["propagate", "--gspmd", "example:transformer"],
    ],
    ids=["load-sleeping", "load-forking", "propagate-gspmd"],
)
def test_killing_the_cli_midway_leaves_nothing_running(argv):
    marker = uuid.uuid4().hex
    env = dict(os.environ, **{MARKER: marker})
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *argv],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Killed once it has started a worker: that is what must not outlive it.
        deadline = time.monotonic() + 30
        while len(_marked_pids(marker)) < 2 and time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        left = _marked_pids(marker)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _marked_pids(marker)
        assert not left, f"{argv}: processes {left} outlived the killed command"
    finally:
        for pid in _marked_pids(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


SETSID_PIDS = "SETSID_AT_IMPORT_PIDS"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    "argv, code",
    [
        (["load", str(HOSTILE / "setsid_at_import.py")], 0),
        (["run", str(HOSTILE / "setsid_at_import.py"), "--mesh", "data=2"], 0),
        (["load", str(HOSTILE / "setsid_hangs.py"), "--timeout", "5"], 1),
        (["run", str(HOSTILE / "setsid_run_hangs.py"), "--mesh", "data=2", "--timeout", "5"], 1),
        (["run", str(HOSTILE / "setsid_run_hangs.py"), "--mesh", "data=2"], 130),
    ],
    ids=["load", "run", "load-timeout", "run-timeout", "run-ctrl+c"],
)
def test_what_a_program_starts_in_a_session_of_its_own_ends_with_its_job(tmp_path, argv, code):
    # Each import of the program starts three children in sessions of their own: one that
    # keeps the environment (the marker finds it), one with an environment of its own and
    # one forked without a new program (only the pids file names those).
    marker = uuid.uuid4().hex
    pids = tmp_path / "pids.txt"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *argv],
        cwd=tmp_path,
        env=dict(os.environ, **{MARKER: marker, SETSID_PIDS: str(pids)}),
        stdin=subprocess.DEVNULL,
        # Files, not pipes: a child left running would hold a pipe open.
        stdout=(tmp_path / "out.txt").open("w"),
        stderr=(tmp_path / "err.txt").open("w"),
    )
    try:
        if code == 130:
            deadline = time.monotonic() + 60
            while len(_pids(pids)) < 6 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1)  # the run worker imported the program: it hangs in its run
            proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == code, (tmp_path / "err.txt").read_text()
        children = _pids(pids)
        assert len(children) >= 3 and len(children) % 3 == 0, children
        assert all(gone_within(pid, 5) for pid in children), [p for p in children if alive(p)]
        # The fork server gets a moment to notice that the command is gone.
        assert all(gone_within(pid, 5) for pid in _marked_pids(marker))
    finally:
        proc.kill()
        proc.wait()
        for pid in _marked_pids(marker) + _pids(pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []
