"""The hostile-input corpus through the Python API: each ``propagate`` case of
tests/inputs/hostile/cases*.json on a program file is asked of ``shardscope.inspect`` as a
notebook user would ask it (the file's ``PROGRAM`` and ``EXAMPLE_ARGS``, its ``MESH`` and
``SPECS`` or the case's ``--mesh`` and ``--spec``).

The API must agree with the command line on whether the case is an error, and an error
must be a ``ShardscopeError`` of one line, never another exception or a crash. The cases
run in one child process, so a crash fails the test instead of taking pytest down.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.support.inputs import PROGRAMS, REPO
from tests.test_hostile import CASES, HOSTILE

pytestmark = pytest.mark.slow

# Files whose import runs nothing but definitions (others exit, hang or fork on import,
# which the window and command-line corpora cover).
IMPORT_SAFE = {
    "ok.py",
    "own_mesh_axes.py",
    "specs_unknown_axis.py",
    "specs_too_many_dims.py",
    "specs_unknown_name.py",
    "specs_wrong_type.py",
    "mesh_wrong_type.py",
    "example_args_int.py",
}

DRIVER = r"""
import json, runpy, sys
import shardscope
from shardscope.backend.errors import ShardscopeError
from shardscope.backend.sharding.spec import parse_spec

out = []
for case in json.loads(sys.stdin.read()):
    try:
        ns = runpy.run_path(case["path"])
        mesh = case["mesh"] if case["mesh"] is not None else ns.get("MESH")
        specs = ns.get("SPECS")
        if case["specs"]:
            specs = {name: parse_spec(text).to_jax() for name, text in case["specs"].items()}
        r = shardscope.inspect(
            ns["PROGRAM"], *ns["EXAMPLE_ARGS"], mesh=mesh, in_shardings=specs
        )
        r.to_json()
        out.append({"name": case["name"], "got": "ok"})
    except ShardscopeError as exc:
        out.append({"name": case["name"], "got": "error", "message": str(exc)})
    except Exception as exc:
        out.append({"name": case["name"], "got": type(exc).__name__, "message": str(exc)})
print(json.dumps(out))
"""


def _api_cases() -> list[dict]:
    out = []
    where = {"H": str(HOSTILE), "P": str(PROGRAMS)}
    for case in CASES:
        argv = [a for a in case["argv"] if a != "--json"]
        if not argv or argv[0] != "propagate" or len(argv) < 2:
            continue
        if any(a.startswith("LONG:") for a in argv):
            continue  # a value the CLI expands (test_hostile._argv), no API argument
        path = argv[1]
        if not path.startswith(("{H}/", "{P}/")) or path.split("/")[-1] not in IMPORT_SAFE:
            continue
        rest, specs, mesh = argv[2:], {}, None
        usable = True
        while rest:
            flag, value, rest = rest[0], rest[1] if len(rest) > 1 else None, rest[2:]
            # Open dimensions and priorities have no PartitionSpec form, and an empty spec
            # is JAX's P(), which fits any rank: the API cannot be asked those.
            if flag == "--spec" and value and "=" in value and not any(c in value for c in "?@"):
                name, text = value.split("=", 1)
                specs[name] = text
                usable = usable and bool(text)
            elif flag == "--mesh" and value:
                mesh = {k: int(v) for k, v in (p.split("=") for p in value.split(","))}
            else:
                usable = False
        if usable:
            out.append(
                {
                    "name": case["name"],
                    "path": path.format(**where),
                    "specs": specs,
                    "mesh": mesh,
                    "expect": "ok" if case["expect"] == "ok" else "error",
                }
            )
    return out


API_CASES = _api_cases()


def test_the_corpus_has_api_cases():
    assert len(API_CASES) >= 10


def test_every_corpus_case_agrees_with_the_command_line_through_the_api():
    done = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input=json.dumps(API_CASES),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env=dict(os.environ, JAX_PLATFORMS="cpu"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = {r["name"]: r for r in json.loads(done.stdout.strip().splitlines()[-1])}
    failures = []
    for case in API_CASES:
        got = results[case["name"]]
        if got["got"] not in ("ok", "error"):
            failures.append(f"{case['name']}: {got['got']}: {got['message']}")
        elif got["got"] != case["expect"]:
            failures.append(f"{case['name']}: the CLI says {case['expect']}, the API {got}")
        elif got["got"] == "error" and "\n" in got["message"]:
            failures.append(f"{case['name']}: not one line: {got['message']!r}")
    assert not failures, "\n".join(failures)
