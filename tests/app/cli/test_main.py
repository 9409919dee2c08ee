"""The CLI entry point: the parser's commands, exit codes, and a clean exit on failure."""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import shardscope.app.cli.main as cli_main
from shardscope.app.cli.main import build_parser, main
from shardscope.backend.errors import ProgramError, ShardscopeError
from shardscope.backend.program.load import load_program
from tests.support.inputs import REPO, write_input
from tests.support.processes import gone_within

ROOT = REPO


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    for command in ("gui", "load"):
        assert command in out


def test_the_parser_lists_the_commands_in_order():
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == ["gui", "load", "shard", "propagate", "run", "render", "capture"]
    # In --help, a command's name is indented by four spaces, its wrapped help by more.
    names = [
        line.split()[0]
        for line in parser.format_help().splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert names == ["gui", "load", "shard", "propagate", "run", "render", "capture"]


# A command line of each command whose ``run`` reads a typed ``<Name>Args``.
TYPED = {
    "gui": ["gui"],
    "load": ["load", "example:mlp"],
    "shard": ["shard", "--mesh", "a=2", "--shape", "4"],
    "propagate": ["propagate", "example:mlp"],
    "run": ["run", "example:mlp"],
    "render": ["render", "example:mlp", "--out", "x.png"],
    "capture": ["capture", "--", "python", "x.py"],
}


def _declared(protocol) -> set[str]:
    return {name for cls in protocol.__mro__ for name in getattr(cls, "__annotations__", {})}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_each_commands_typed_args_name_only_what_its_parser_gives(name):
    (command,) = [c for c in cli_main.COMMANDS if c.NAME == name]
    protocol = getattr(command, f"{name.capitalize()}Args")
    assert run_annotation(command) is protocol
    parsed = vars(build_parser().parse_args(TYPED[name]))
    # ``main`` adds what a command may call while its program loads
    assert _declared(protocol) - {"while_loading"} <= set(parsed)


def run_annotation(command):
    import typing

    return typing.get_type_hints(command.run)["args"]


def fake_command(run, preflight=None, name="fake"):
    """A command module as ``COMMANDS`` lists them, with a ``--say`` option."""
    command = SimpleNamespace(
        NAME=name,
        HELP="a command for tests",
        add_arguments=lambda parser: parser.add_argument("--say", default=""),
        run=run,
    )
    if preflight is not None:
        command.preflight = preflight
    return command


def test_a_command_runs_with_its_options_and_returns_its_code(monkeypatch):
    seen = []

    def run(args):
        seen.append(args.say)
        return 3

    monkeypatch.setattr(cli_main, "COMMANDS", [fake_command(run)])
    assert main(["fake", "--say", "hello"]) == 3
    assert seen == ["hello"]


def test_a_command_that_returns_nothing_exits_0(monkeypatch):
    monkeypatch.setattr(cli_main, "COMMANDS", [fake_command(lambda args: None)])
    assert main(["fake"]) == 0


def test_no_command_opens_the_gui(monkeypatch):
    ran = []
    gui = fake_command(lambda args: ran.append(args.command), name="gui")
    monkeypatch.setattr(cli_main, "COMMANDS", [gui])
    assert main([]) == 0
    assert ran == ["gui"]


def test_a_user_error_is_one_line_and_exit_1(monkeypatch, capsys):
    def run(args):
        raise ProgramError("prog.py: defines no PROGRAM; add one")

    monkeypatch.setattr(cli_main, "COMMANDS", [fake_command(run)])
    assert main(["fake"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "error: prog.py: defines no PROGRAM; add one\n"
    assert captured.out == ""


def test_ctrl_c_exits_130(monkeypatch):
    def run(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "COMMANDS", [fake_command(run)])
    assert main(["fake"]) == 130


def test_a_preflight_problem_exits_2_before_the_command_runs(monkeypatch, capsys):
    ran = []
    command = fake_command(lambda args: ran.append(1), preflight=lambda args: "no way: fix it")
    monkeypatch.setattr(cli_main, "COMMANDS", [command])
    assert main(["fake"]) == 2
    assert ran == []
    assert capsys.readouterr().err == "no way: fix it\n"


def test_a_preflight_without_a_problem_lets_the_command_run(monkeypatch):
    command = fake_command(lambda args: 0, preflight=lambda args: None)
    monkeypatch.setattr(cli_main, "COMMANDS", [command])
    assert main(["fake"]) == 0


def test_a_bug_is_not_swallowed(monkeypatch):
    def run(args):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli_main, "COMMANDS", [fake_command(run)])
    with pytest.raises(ZeroDivisionError):
        main(["fake"])


def test_a_command_that_fails_at_once_exits_cleanly_on_one_core():
    # A loading command starts the fork server and warms jax up while it loads; one that
    # fails before that work ends must still exit with its own code, not abort while the
    # interpreter shuts down with jaxlib half imported.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT)}
    taskset = ["taskset", "-c", "0"] if Path("/usr/bin/taskset").exists() else []
    for _ in range(3):
        proc = subprocess.run(
            [*taskset, sys.executable, "main.py", "load", "/nonexistent/program.py"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("error: /nonexistent/program.py: no such file")


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (["--timeout", "-1"], "give e.g. --timeout 300"),
        (["--timeout", "nan"], "give e.g. --timeout 300"),
        (["--timeout", "inf"], "give e.g. --timeout 300"),
        (["--timeout", "1e308"], "give at most --timeout 604800"),
        (["--mesh", "data=\u0664"], "digits 0-9"),
        (["--mesh", "data=10000000000"], "smaller axis sizes"),
    ],
)
def test_numeric_edge_options_are_one_line_errors(args, fix):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "propagate", "example:mlp", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (1, 2)
    assert proc.stdout == ""
    err = proc.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in err
    assert fix in err


def test_a_path_longer_than_the_system_opens_is_a_one_line_error(capsys):
    path = "a/" * 2100 + "x.py"
    with pytest.raises(SystemExit) as info:
        main(["propagate", path])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "move or rename the file" in err
    assert len(err) < 300


def test_a_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as info:
        main(["shard"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "--help" in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("route", ["fork server", "fresh worker"])
def test_a_child_forked_by_a_program_does_not_outlive_the_load(tmp_path, capsys, route):
    from shardscope.backend.isolation.forkserver import shared_server

    path = write_input(
        tmp_path,
        "forks.py",
        "import os, time\nimport jax.numpy as jnp\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    time.sleep(600)\n"
        "    os._exit(0)\n"
        "open('child.pid', 'w').write(str(child))\n"
        "PROGRAM = lambda x: x * 2\nEXAMPLE_ARGS = (jnp.ones(4),)\n",
    )
    server = shared_server()
    busy = route == "fresh worker" and server.try_acquire()
    try:
        assert main(["load", path]) == 0
    finally:
        if busy:
            server.release()
    assert gone_within(int((tmp_path / "child.pid").read_text()), 5)


def _children(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_the_cli_during_gspmd_leaves_no_worker(tmp_path):
    # Python imports sitecustomize in every process it starts: here it makes the GSPMD
    # worker spin forever once it looks for its module, as a compile that never ends would.
    write_input(
        tmp_path,
        "sitecustomize.py",
        "import sys\n"
        "class Spin:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        while name == 'shardscope.backend.gspmd.compile':\n"
        "            pass\n"
        "sys.meta_path.insert(0, Spin())\n",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    cli = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "propagate", "example:mlp", "--gspmd"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while not workers:
            assert cli.poll() is None, "the GSPMD worker ended before the test saw it"
            assert time.monotonic() < deadline
            workers = [pid for pid, cmd in _children(cli.pid) if "gspmd.compile" in cmd]
            time.sleep(0.05)
        leftovers = [pid for pid, _ in _children(cli.pid)]
        cli.kill()
        cli.wait()
        for pid in leftovers:
            assert gone_within(pid, 10), f"process {pid} outlived the CLI"
    finally:
        cli.kill()
        cli.wait()


@pytest.mark.parametrize("timeout", ["-1", "nan", "1e308", "0"])
def test_an_unusable_time_limit_from_a_script_is_one_line(timeout):
    # The command line refuses these while parsing; a script calling the loader gets the
    # worker's own check.
    with pytest.raises(ShardscopeError) as info:
        load_program("example:mlp", timeout=float(timeout))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("a time limit of ") and "give e.g. --timeout 300" in message


@pytest.mark.parametrize("path", ["a/" * 2100 + "x.py", "a" * 300 + ".py"])
def test_a_path_too_long_is_one_line_from_the_cli_and_from_a_script(capsys, path):
    with pytest.raises(SystemExit) as info:
        main(["load", path])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and len(err) < 300 and "move or rename the file" in err
    with pytest.raises(ShardscopeError) as caught:
        load_program(path)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 300
    assert message.startswith("the path ") and message.endswith("move or rename the file")


@pytest.mark.slow
@pytest.mark.parametrize("to_group", [False, True], ids=["process", "group"])
@pytest.mark.parametrize("after_s", [0.5, 5.0])
def test_ctrl_c_ends_a_load_that_hangs_at_once_leaving_nothing(to_group, after_s):
    import signal
    import uuid

    from tests.support.inputs import INPUTS
    from tests.test_hostile import MARKER, _marked_pids

    marker = uuid.uuid4().hex
    proc = subprocess.Popen(
        [sys.executable, "main.py", "load", str(INPUTS / "hostile" / "hangs.py")],
        cwd=REPO,
        env={**os.environ, MARKER: marker},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a group of its own, as a terminal's foreground job
    )
    try:
        time.sleep(after_s)
        sent = time.monotonic()
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert err.decode().strip().splitlines() == [
        "error: interrupted (Ctrl+C): stopped, with every process it started"
    ]
    assert took < 10
    deadline = time.monotonic() + 3
    while _marked_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _marked_pids(marker)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left
