"""The CLI entry point: the parser's commands, exit codes, and a clean exit on failure."""

import argparse
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import shardscope.app.cli.main as cli_main
from shardscope.app.cli.main import build_parser, main
from shardscope.backend.errors import ProgramError
from tests.support.inputs import REPO

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
    assert list(sub.choices) == ["gui", "load", "shard", "propagate", "render"]
    # In --help, a command's name is indented by four spaces, its wrapped help by more.
    names = [
        line.split()[0]
        for line in parser.format_help().splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert names == ["gui", "load", "shard", "propagate", "render"]


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
