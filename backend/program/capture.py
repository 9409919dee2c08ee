"""Capture from an unmodified script: run it with fake CPU devices and keep every function
it compiles with ``jax.jit``.

The script runs as the user would run it (``python train.py ARGS``), in a worker process
group of ours, with:

- ``N`` fake CPU devices (``--xla_force_host_platform_device_count``), so a script that
  builds its own 8-device mesh runs on a laptop;
- JAX's own dump of every compiled module (``JAX_DUMP_IR_TO``, StableHLO with argument
  names and source lines, before any sharding propagation);
- ``capture_site/sitecustomize.py`` first on ``PYTHONPATH``, which tells the script's own
  jitted functions from JAX's eager operations, counts their calls, and stops the script
  after ``steps`` calls of any one function if asked, so a training loop need not finish.

The compiles of the script's functions become a ``Capture`` (``capture_file``); the rest
are counted as skipped.

With ``hosts`` above 1 the command runs as that many local processes of ``N / hosts``
devices each, joined through JAX's distributed runtime (``capture_hosts`` starts them,
``capture_site/_shardscope_hosts`` fills ``jax.distributed.initialize``'s arguments); what
process 0 compiled is kept, with a warning where another compiled other modules.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from shardscope.backend.errors import ProgramError, shortened
from shardscope.backend.isolation.jobs import run_command
from shardscope.backend.isolation.limits import check_timeout
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import WorkerTimeout, worker_env
from shardscope.backend.program.capture_file import Capture, CapturedFunction, left_json, left_text
from shardscope.backend.program.mlir import count_ops

SITE = Path(__file__).resolve().parent / "capture_site"
DEFAULT_DEVICES = 8
DEFAULT_TIMEOUT = 600.0
MAX_DEVICES = 4096
MAX_HOSTS = 64
# Seconds past --timeout a multi-host capture's worker has to end its hosts and report.
_HOSTS_WIND_UP_S = 30.0

_DUMP_NAME = re.compile(r"jax_ir(\d+)_.*_compile\.mlir")
# A module's name as MLIR prints it: bare (``@jit_loss``), or quoted with its bytes
# escaped where it holds other characters (``@"jit_a-b"``, ``@"jit_\\C3\\A9"`` for ``jit_é``).
_MODULE_NAME = re.compile(r'^module @(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))', re.MULTILINE)
_ESCAPE = re.compile(rb"\\([0-9A-Fa-f]{2}|.)")
_MESH = re.compile(r"sdy\.mesh @[\w.$-]+ = <\[([^\]]*)\]")
_MESH_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')


def capture_script(
    argv: list[str],
    *,
    devices: int = DEFAULT_DEVICES,
    steps: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: Path | None = None,
    output: int | None = None,
    hosts: int = 1,
) -> Capture:
    """Run ``argv`` (the user's command) and return what it compiled; ProgramError (one
    line) when it cannot run or compiled none of its own functions. With ``hosts`` above
    1, the command runs as that many processes of ``devices / hosts`` devices each, joined
    through JAX's distributed runtime (``capture_hosts``), and process 0's functions are
    kept."""
    _check_request(argv, devices, steps, timeout, hosts)
    with tempfile.TemporaryDirectory(prefix="shardscope-capture-") as tmp:
        folder = Path(tmp)
        dump = folder / "dump"
        env = _capture_env(folder, dump, devices // hosts, devices, steps)
        if hosts > 1:
            return _capture_hosts(
                argv, env, devices, hosts, timeout, cwd or Path.cwd(), output, folder
            )
        try:
            code = run_command(argv, env=env, cwd=cwd or Path.cwd(), timeout=timeout, output=output)
            ended = _ended(code, folder)
        except WorkerTimeout:
            ended = f"stopped after {timeout:g} s (--timeout)"
            code = None
        except KilledItsParent as exc:
            raise ProgramError(exc.message(f"`{' '.join(argv)}`")) from None
        return _collect(argv, devices, folder, dump, ended, code, timeout)


def _check_request(
    argv: list[str], devices: int, steps: int | None, timeout: float, hosts: int
) -> None:
    """ProgramError (one line) for a capture that cannot start as asked."""
    if not argv:
        raise ProgramError(
            "no command to capture: give it after --, as in `capture -- python train.py`"
        )
    if not 1 <= devices <= MAX_DEVICES:
        raise ProgramError(f"--devices {devices}: give a whole number from 1 to {MAX_DEVICES}")
    if steps is not None and steps < 1:
        raise ProgramError(f"--steps {steps}: give a whole number of steps, at least 1")
    check_timeout(timeout)
    if not 1 <= hosts <= MAX_HOSTS or devices % hosts:
        raise ProgramError(
            f"--hosts {hosts}: give a whole number from 1 to {MAX_HOSTS} that divides "
            f"--devices {devices} (each host has --devices / --hosts devices)"
        )
    if shutil.which(argv[0]) is None:
        raise ProgramError(
            f"cannot run {shortened(argv[0])}: no such command; give the command as you would run it, "
            f"as in `capture -- python train.py`"
        )


def _capture_env(
    folder: Path, dump: Path, per_host: int, devices: int, steps: int | None
) -> dict[str, str]:
    """The environment the captured command runs in: JAX dumping its modules to ``dump``
    and the capture site (on ``PYTHONPATH``) writing to ``folder``."""
    env = worker_env(
        per_host,
        {
            "JAX_DUMP_IR_TO": str(dump),
            "JAX_DUMP_IR_MODES": "stablehlo",
            "SHARDSCOPE_CAPTURE_DIR": str(folder),
            "SHARDSCOPE_CAPTURE_DEVICES": str(devices),
            "PYTHONPATH": os.pathsep.join(
                [str(SITE), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        },
    )
    env.pop("SHARDSCOPE_CAPTURE_STEPS", None)
    if steps is not None:
        env["SHARDSCOPE_CAPTURE_STEPS"] = str(steps)
    return env


def _capture_hosts(
    argv: list[str],
    env: dict[str, str],
    devices: int,
    hosts: int,
    timeout: float,
    cwd: Path,
    output: int | None,
    folder: Path,
) -> Capture:
    """``capture_script`` with ``hosts`` processes (``capture_hosts``): process 0's
    functions, a warning where the others compiled other modules; ProgramError naming the
    host at fault where one failed or fell behind."""
    from shardscope.backend.program import capture_hosts

    for name in ("SHARDSCOPE_CAPTURE_DIR", "JAX_DUMP_IR_TO"):
        env.pop(name, None)
    command = " ".join(argv)
    try:
        code = run_command(
            capture_hosts.command(folder, hosts, timeout, argv),
            env=env,
            cwd=cwd,
            timeout=timeout + _HOSTS_WIND_UP_S,
            output=output,
        )
    except WorkerTimeout:
        code = None
    except KilledItsParent as exc:
        raise ProgramError(exc.message(f"`{command}`")) from None
    found = capture_hosts.read_ends(folder, hosts)
    if code == 127 or found is None:
        raise ProgramError(f"`{command}` could not start as {hosts} processes; check the command")
    ends, timed_out, lagged = found
    stopped = any((capture_hosts.folder_of(folder, k) / "stopped").exists() for k in range(hosts))
    ended, fault = capture_hosts.blame(ends, timed_out, timeout, stopped, lagged)
    if fault is not None:
        raise ProgramError(f"`{command}` on {hosts} hosts: {fault}")
    own = [capture_hosts.folder_of(folder, k) for k in range(hosts)]
    first = ends[0].status if ends[0].status is not None else 0
    capture = _collect(argv, devices, own[0], own[0] / "dump", ended, first, timeout)
    capture.hosts = hosts
    mine = _compiled(own[0] / "dump")
    for k in range(1, hosts):
        theirs = _compiled(own[k] / "dump")
        if theirs != mine:
            only = sorted({m for m, _ in mine} ^ {m for m, _ in theirs})
            which = f" ({', '.join(only[:5])}{', ...' if len(only) > 5 else ''})" if only else ""
            capture.warnings.append(
                f"host {k} compiled other modules than host 0{which}: an SPMD script "
                f"compiles the same ones on every host; kept host 0's"
            )
    return capture


def _compiled(dump: Path) -> list[tuple[str, int]]:
    """Each module a host compiled, in order, as (name, op count)."""
    found = []
    for path in _dumps(dump):
        text = _dumped(path)
        match = _MODULE_NAME.search(text)
        found.append((_module_name(match) if match else path.stem, count_ops(text)))
    return found


def _ended(code: int, folder: Path) -> str:
    if (folder / "stopped").exists():
        return "stopped after --steps"
    if code == 0:
        return "finished"
    if code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _collect(
    argv: list[str],
    devices: int,
    folder: Path,
    dump: Path,
    ended: str,
    code: int | None,
    timeout: float,
) -> Capture:
    # Imported here, not with the module: every command's parser imports this one.
    from shardscope.backend.program.torch_capture import collect_torch

    records = _records(folder)
    by_module: dict[str, list[dict]] = {}
    for record in records:
        by_module.setdefault(module_name_of(record["name"]), []).append(record)
    claims = _claims(records)
    capture = Capture(list(argv), devices, ended)
    seen: dict[str, int] = {}
    for path in _dumps(dump):
        text = _dumped(path)
        match = _MODULE_NAME.search(text)
        module = _module_name(match) if match else path.stem
        owners = by_module.get(module)
        if not owners:
            capture.skipped[module] = capture.skipped.get(module, 0) + 1
            continue
        record = next((r for r in owners if path.name in claims.get(id(r), ())), None)
        if record is None:
            record = owners[0] if len(owners) == 1 else _busiest(owners)
        text = by_user_names(text, record.get("arg_names"))
        base = record["name"]
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}.{seen[base]}"
        capture.functions.append(
            CapturedFunction(
                name=name,
                module=module,
                mlir=text,
                ops=count_ops(text),
                mesh=module_mesh_text(text),
                file=_typed(record.get("file"), str),
                line=_typed(record.get("line"), int),
                calls=_calls(record, path.name),
            )
        )
    if collect_torch(folder, capture, timeout) and not capture.functions:
        raise ProgramError(
            f"`{' '.join(argv)}` {ended} and imported torch_xla, but no sync "
            f"(torch_xla.sync(), xm.mark_step()) compiled a graph; capture a script that "
            f"syncs at least once (its output above says why it stopped)"
        )
    if not capture.functions:
        raise ProgramError(_nothing_captured(argv, ended, code, capture.skipped, folder))
    return capture


_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)"\)')


def by_user_names(text: str, names: object) -> str:
    """A module's text with each argument JAX named by a library's split
    (``model.states[0][1]``) named by the user's path of it (``model.w1.kernel``), as the
    hook recorded them (``arg_names``: JAX's name -> the user's, None where two calls
    named it two ways), in one pass."""
    if not isinstance(names, dict) or not names:
        return text
    renamed = {
        k: v.replace("\\", "\\\\").replace('"', '\\"')
        for k, v in names.items()
        if isinstance(k, str) and isinstance(v, str)
    }
    return _LOC.sub(lambda m: f'loc("{renamed.get(m[1], m[1])}")', text)


def _claims(records: list[dict]) -> dict[int, dict]:
    """id of each record -> its ``compiles`` (dump file -> runs of that compile), where
    the hook counted them."""
    return {
        id(r): r["compiles"]
        for r in records
        if isinstance(r.get("compiles"), dict)
        and all(type(n) is int for n in r["compiles"].values())
    }


def _calls(record: dict, dump: str) -> int | None:
    """How often the compile dumped to ``dump`` ran: as the hook counted that compile's
    runs; a compile none of whose runs it saw (compiled ahead of time, run inside
    another transformation) is not known (None). From a hook that counted each function
    in all only, the function's runs."""
    compiles = record.get("compiles")
    if isinstance(compiles, dict):
        n = compiles.get(dump)
        return n if type(n) is int else None
    calls = record.get("calls")
    return calls if type(calls) is int else None


def _typed(value: object, kind: type) -> object:
    """``value`` where it is of ``kind`` (a ``bool`` is no ``int``), else None."""
    return value if type(value) is kind else None


def _busiest(records: list[dict]) -> dict:
    return max(records, key=lambda r: _typed(r.get("calls"), int) or 0)


def _records(folder: Path) -> list[dict]:
    """What the hook recorded of the script's jitted functions (none where it recorded
    nothing)."""
    data = left_json(folder / "functions.json", "the capture's record of jitted functions")
    functions = data.get("functions") if isinstance(data, dict) else None
    if not isinstance(functions, list):
        return []
    return [f for f in functions if isinstance(f, dict) and isinstance(f.get("name"), str)]


def _dumped(path: Path) -> str:
    """The text of a module JAX dumped (empty where it is gone)."""
    return left_text(path, "JAX's dump") or ""


def _dumps(dump: Path) -> list[Path]:
    try:
        names = os.listdir(dump)
    except OSError:
        return []
    found = []
    for name in names:
        m = _DUMP_NAME.fullmatch(name)
        if m:
            found.append((int(m.group(1)), dump / name))
    return [p for _, p in sorted(found)]


def _nothing_captured(
    argv: list[str], ended: str, code: int | None, skipped: dict[str, int], folder: Path
) -> str:
    command = " ".join(argv)
    if code == 127 and not skipped:
        return f"`{command}` could not start (exit status 127); check the command"
    if not (folder / "functions.json").exists() and code == 0:
        return (
            f"`{command}` ran, but not with this capture's hook (is it a Python command "
            f"that imports jax?); give the command that runs the script, as in "
            f"`capture -- python train.py`"
        )
    what = f"{sum(skipped.values())} eager operation(s) only" if skipped else "nothing"
    return (
        f"`{command}` {ended} and compiled {what} with jax.jit; capture a script that calls "
        f"a jitted function (its output above says why it stopped)"
    )


def module_name_of(function_name: str) -> str:
    """The name JAX gives the modules of a function's compiles (``jit_loss``; ``<lambda>``
    is ``jit__lambda``): ``jit_`` and the name, each character but word characters, dots
    and dashes made ``_``, trailing ones dropped (``sanitize_name(...).rstrip("_")`` in
    jax._src.interpreters.mlir)."""
    return re.sub(r"[^\w.-]", "_", "jit_" + function_name).rstrip("_")


def _module_name(match: re.Match) -> str:
    """The module name ``_MODULE_NAME`` matched, its escapes read."""
    quoted, bare = match.groups()
    if quoted is None:
        return bare
    raw = _ESCAPE.sub(
        lambda m: bytes.fromhex(m[1].decode()) if len(m[1]) == 2 else m[1],
        quoted.encode("utf-8"),
    )
    return raw.decode("utf-8", errors="replace")


def module_mesh_text(text: str) -> dict[str, int] | None:
    """The first mesh with axes that a module's text declares (JAX also declares an empty
    one)."""
    for m in _MESH.finditer(text):
        axes = {name: int(size) for name, size in _MESH_AXIS.findall(m.group(1))}
        if axes:
            return axes
    return None
