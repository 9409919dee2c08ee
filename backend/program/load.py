"""Load a program: a Python file, a StableHLO ``.mlir`` file or a built-in example.

Every kind ends as a lowered StableHLO module (text with debug locations) plus the names,
defaults and sources the rest of shardscope needs. User code never runs in the calling
process: a Python program is imported, traced and lowered in a worker process
(``shardscope.backend.program.lower``), so one that raises, hangs or crashes becomes a one-line
``ProgramError`` and the caller carries on.
"""

from __future__ import annotations

import errno
import json
import re
import stat
import tempfile
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ProgramError, shortened
from shardscope.backend.files import MAX_CAPTURE_BYTES, MAX_MODULE_BYTES, read_bytes, shown_path
from shardscope.backend.isolation.forkserver import ForkServerError, shared_server
from shardscope.backend.isolation.jobs import run_worker
from shardscope.backend.isolation.limits import memory_limit, memory_message
from shardscope.backend.isolation.relay import KilledItsParent
from shardscope.backend.isolation.worker_job import Crash, WorkerJob, WorkerTimeout
from shardscope.backend.program.capture_file import (
    capture_source,
    is_capture_file,
    name_in_source,
    parse_capture,
    split_capture_source,
)
from shardscope.backend.program.mlir import (
    MAX_NESTING,
    nesting_depth,
    new_context,
    parse_module,
    text_problem,
)
from shardscope.backend.program.snippets import Snippets

if TYPE_CHECKING:
    from jaxlib.mlir import ir

    from shardscope.backend.program.graph import ProgramGraph

# jaxlib (and with it MLIR and numpy) is imported where a module is parsed, not here, and so
# are the graph and location readers that import it: the CLI imports this module before it
# starts the loader's worker, and should not wait.

__all__ = ["Program", "CodeAnnotation", "load_program", "list_examples"]

# The folder that holds app/, backend/, viewers/ and assets/: the repository in a checkout,
# the installed shardscope package otherwise.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# The worker that imports, traces and lowers a Python program.
LOWER_WORKER = "shardscope.backend.program.lower"
EXAMPLES_DIR = PACKAGE_ROOT / "assets" / "examples"
EXAMPLE_PREFIX = "example:"
DEFAULT_TIMEOUT = 120.0
# The largest .mlir file read (``files.MAX_MODULE_BYTES``).
MAX_MLIR_BYTES = MAX_MODULE_BYTES


@dataclass(frozen=True)
class CodeAnnotation:
    """A sharding the program itself wrote (constraint, jit in/out sharding, shard_map)."""

    value: int
    display_name: str
    sharding: str


@dataclass
class Program:
    """A loaded program: its lowered module text and what the user sees of it."""

    name: str
    source: str
    kind: str  # "python" | "mlir" | "example" | "capture" | "api" (shardscope.inspect)
    path: str | None
    mlir_text: str
    mesh: dict[str, int] | None = None
    specs: dict[str, list] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    load_seconds: float = 0.0
    # The source lines around its ops, read when it loaded (``snippets.read_snippets``).
    snippets: Snippets = field(default_factory=dict)
    # True when it came from a saved session's data rather than from running its source.
    from_session: bool = False
    # The Python file of a session's program the user allowed to run (``consent.allow``).
    allowed_file: str | None = None
    # The device id at each row-major position of the program's own mesh, where it is not
    # 0, 1, 2... (a torch_xla ``xs.Mesh(np.array([0, 2, 4, 6, 1, 3, 5, 7]), ...)``).
    device_order: tuple[int, ...] | None = None
    # The framework that built it ("jax", or "torch_xla" for a torch_xla capture) and the
    # partitioner that framework compiles it with ("shardy"; "gspmd" for torch_xla 2.9).
    framework: str = "jax"
    partitioner: str = "shardy"
    # The framework's own compiled, partitioned module (HLO text), where the capture
    # recorded one: its collectives are the ones the program really runs.
    compiled_hlo: str | None = None
    # How the script sharded each argument it sharded, by argument name, where the
    # capture recorded it (``FSDPv2 (its parameters) at train.py:78``).
    sharded_by: dict[str, str] = field(default_factory=dict)
    # The processes a capture ran its script as (``capture --hosts``); 1 for all else.
    hosts: int = 1
    # Where a captured function is defined in its script (file, line), as the capture
    # recorded it: the Source dock finds its arguments' lines there.
    def_site: tuple[str, int] | None = None
    # What the load tells the user beside the program (a spec that shards nothing).
    warnings: tuple[str, ...] = ()

    def parse(self, context: ir.Context | None = None) -> ir.Module:
        """A fresh parsed copy of the lowered module (callers may mutate it)."""
        return parse_module(self.mlir_text, context)

    @cached_property
    def graph(self) -> ProgramGraph:
        """The program graph of the lowered module, built once."""
        # The graph needs jaxlib and numpy, which importing this module must not (see above).
        from shardscope.backend.program.graph import build_graph

        return build_graph(self.parse())

    def unknown_spec_names(self) -> list[str]:
        """Names in the program's ``SPECS`` that name no argument or result of it."""
        return [name for name in self.specs or {} if self.graph.value_by_name(name) is None]

    @property
    def arg_names(self) -> list[str]:
        """Argument names as JAX's key paths (``x``, ``params['w1']``)."""
        return [v.name or "" for v in self.graph.arguments]

    @property
    def result_names(self) -> list[str]:
        """``result[i]`` for each flattened output."""
        return [f"result[{i}]" for i in range(len(self.graph.results))]

    @property
    def annotation_kind(self) -> str:
        """``sdy``, ``gspmd`` or ``none``: which sharding dialect the module carries."""
        if "sdy.mesh" in self.mlir_text or "#sdy.sharding" in self.mlir_text:
            return "sdy"
        if "mhlo.sharding" in self.mlir_text:
            return "gspmd"
        return "none"

    @property
    def code_annotations(self) -> list[CodeAnnotation]:
        """Values the program's own code sharded, in id order."""
        return [
            CodeAnnotation(v.id, v.display_name, v.code_sharding)
            for v in self.graph.values
            if v.code_sharding
        ]


def list_examples() -> list[str]:
    """Names of the built-in examples (``example:NAME``)."""
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.py") if not p.name.startswith("_"))


def split_source(source: str) -> tuple[str, dict[str, str]]:
    """Split ``example:transformer?layers=24`` into the source and its parameters."""
    if "?" in source:
        base, query = source.rsplit("?", 1)
        return base, dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    return source, {}


def load_program(
    source: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    while_waiting: Callable[[], object] | None = None,
) -> Program:
    """Load ``source``: a ``.py`` path, a ``.mlir`` path or ``example:NAME``.

    Parameters after ``?`` (``example:transformer?layers=24``) reach a Python program as
    the global ``SHARDSCOPE_PARAMS``. ``while_waiting`` runs in this thread once a worker
    has the program, while it lowers (at most once; not for ``.mlir`` files). Raises
    ``ProgramError`` with a one-line message that names the file (and line, where there
    is one) and the fix.
    """
    if while_waiting is not None:
        while_waiting = _once(while_waiting)
    base, params = split_source(source)
    if base.startswith(EXAMPLE_PREFIX):
        name = base[len(EXAMPLE_PREFIX) :]
        path = EXAMPLES_DIR / f"{name}.py"
        # Only a name from the examples folder: ``example:../../x`` must not run x.py.
        if name not in list_examples() or not path.is_file():
            known = ", ".join(list_examples())
            raise ProgramError(f"no built-in example {shortened(name)}; choose one of: {known}")
        program = _load_python(path, params, timeout, while_waiting)
        program.kind, program.name, program.source = "example", name, source
        return program
    base, captured = split_capture_source(base) if ".json#" in base else (base, None)
    path = Path(base).expanduser()
    try:
        exists = path.exists()
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        raise ProgramError(
            f"the path ({len(base)} characters) is longer than this system opens: "
            f"move or rename the file"
        ) from None
    if not exists:
        raise ProgramError(
            f"{base}: no such file; give a .py or .mlir path, a capture .json (FILE.json#NAME "
            f"for one of its functions), or example:NAME (one of: {', '.join(list_examples())})"
        )
    if path.is_dir():
        raise ProgramError(f"{base}: is a folder; give a .py or .mlir file inside it")
    if path.suffix == ".mlir":
        return _load_mlir(path, source, timeout)
    if path.suffix == ".json":
        return _load_capture(path, captured, source, timeout)
    if path.suffix == ".py":
        program = _load_python(path, params, timeout, while_waiting)
        program.source = source
        return program
    raise ProgramError(
        f"{base}: unknown file type {path.suffix or '(none)'!r}; give a .py program, a .mlir "
        f"module or a capture .json"
    )


def _load_mlir(path: Path, source: str, timeout: float) -> Program:
    text = read_mlir_text(path, timeout)
    program = Program(path.stem, source, "mlir", str(path), text)
    parse_program_text(program, str(path))
    program.mesh = module_mesh(program.graph)
    return program


def _load_capture(path: Path, name: str | None, source: str, timeout: float) -> Program:
    """One function of a capture file (``name``, or the largest) as a program."""
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = True  # reading it says why it cannot be read
    if not regular:
        raise ProgramError(
            f"{path}: not a regular file (a pipe, device or socket); write the capture to a "
            f"file (`capture --out FILE.json -- python SCRIPT`) and load that"
        )
    if not is_capture_file(path):
        raise ProgramError(
            f"{path}: not a capture file; a session opens in the window (gui {path}), and "
            f"`capture -- python SCRIPT` writes capture files"
        )
    capture = parse_capture(read_mlir_text(path, timeout, MAX_CAPTURE_BYTES, "capture"), str(path))
    function = capture.pick(name, str(path))
    # Messages and titles show the name on one line: as a source writes it where it holds
    # a character that does not print (a newline).
    name = function.name if function.name.isprintable() else name_in_source(function.name)
    program = Program(name, source, "capture", str(path), function.mlir)
    parse_program_text(program, capture_source(path, function.name))
    program.mesh = dict(function.mesh) if function.mesh else module_mesh(program.graph)
    program.device_order = tuple(function.device_order) if function.device_order else None
    program.framework = capture.framework
    program.partitioner = function.partitioner
    program.compiled_hlo = function.compiled_hlo
    program.sharded_by = dict(function.sharded_by or {})
    program.hosts = capture.hosts
    if function.file and function.line:
        program.def_site = (function.file, function.line)
    return program


def module_mesh(graph: ProgramGraph) -> dict[str, int] | None:
    """The mesh a module declares: its first with axes (JAX also declares an empty one)."""
    for axes in graph.meshes.values():
        if axes:
            return dict(axes)
    return None


def parse_program_text(program: Program, where: str) -> None:
    """Parse ``program.mlir_text`` here, in this process, and store its graph; a text
    that MLIR cannot read (``mlir.text_problem``), nests too deep for the parser, is not
    MLIR, or has no ``@main`` is a one-line ``ProgramError`` naming ``where`` it came
    from."""
    text = program.mlir_text
    problem = text_problem(text)
    if problem is not None:
        raise ProgramError(
            f"{where}: the module text holds {problem}, which MLIR does not read; export the "
            f"module again with jax.jit(f).lower(...).as_text()"
        )
    depth = nesting_depth(text)
    if depth > MAX_NESTING:
        raise ProgramError(
            f"{where}: brackets nest {depth} deep, over the {MAX_NESTING} shardscope parses "
            f"(the parser would overflow its stack); export the module again with "
            f"jax.jit(f).lower(...).as_text()"
        )
    # jaxlib and the graph (numpy) only once a module is parsed (see the top of the module).
    from jaxlib.mlir import ir

    from shardscope.backend.program.graph import build_graph

    context = new_context()
    try:
        with context:
            module = ir.Module.parse(text)
    except ir.MLIRError as exc:
        raise ProgramError(_mlir_error_message(where, exc)) from None
    try:
        program.graph = build_graph(module)  # cached_property: store the one we built
    except ValueError as exc:
        raise ProgramError(
            f"{where}: {exc}; a module needs a func.func @main as jax.jit(f).lower(...).as_text() writes"
        ) from None


def read_mlir_text(
    path: Path, timeout: float = DEFAULT_TIMEOUT, limit: int | None = None, what: str = "module"
) -> str:
    """The text of a ``.mlir`` file (or a capture file, ``what``): a regular file of at
    most ``limit`` bytes (``MAX_MLIR_BYTES``), read within ``timeout`` seconds; anything
    else is a one-line ``ProgramError``."""
    limit = MAX_MLIR_BYTES if limit is None else limit
    fix = (
        "write the capture to a file (`capture --out FILE.json -- python SCRIPT`) and load that"
        if what == "capture"
        else "load the module from a regular file, or the Python program instead"
    )
    try:
        data = read_bytes(path, limit, fix, what=what, error=ProgramError, timeout=timeout)
    except FileNotFoundError:
        raise ProgramError(f"{what} {shown_path(path)}: no such file; check the path") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProgramError(
            f"{shown_path(path)}: not UTF-8 text (byte {exc.start}); export the module again "
            f"with jax.jit(f).lower(...).as_text()"
        ) from None


def _mlir_error_message(path: Path | str, exc: ir.MLIRError) -> str:
    diagnostics = getattr(exc, "error_diagnostics", None) or []
    line, message = None, str(exc).strip().splitlines()[0]
    if diagnostics:
        first = diagnostics[0]
        message = first.message
        # Reading locations needs jaxlib: only on this error path.
        from shardscope.backend.program.locations import read_location

        line = read_location(first.location).line
    where = f"{path}:{line}" if line else str(path)
    return (
        f"{where}: malformed MLIR: {message}; fix the text or export it again with "
        f"jax.jit(f).lower(...).as_text()"
    )


_MESH_OP = re.compile(r"sdy\.mesh @(\w+) = <\[([^\]]*)\]")
_MESH_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')


def own_mesh(text: str) -> dict[str, int] | None:
    """The axes of the module's ``@mesh`` (else its first mesh with axes), or None."""
    meshes = {}
    for m in _MESH_OP.finditer(text):
        axes = {a: int(n) for a, n in _MESH_AXIS.findall(m.group(2))}
        if axes:
            meshes.setdefault(m.group(1), axes)
    return meshes.get("mesh") or next(iter(meshes.values()), None)


def _once(fn: Callable[[], object]) -> Callable[[], None]:
    done = []

    def run() -> None:
        if not done:
            done.append(True)
            fn()

    return run


def _load_python(
    path: Path, params: dict[str, str], timeout: float, while_waiting: Callable[[], object] | None
) -> Program:
    path = path.resolve()
    result = _lower_in_worker(path, params, timeout, while_waiting)
    if not result["ok"] and result.get("devices"):
        # The program builds a mesh at import larger than the worker's default devices.
        result = _lower_in_worker(path, params, timeout, while_waiting, result["devices"])
    if not result["ok"]:
        raise ProgramError(result["error"])
    return lowered_program(path, params, result)


def lowered_program(path: Path, params: dict[str, str], result: dict) -> Program:
    """The ``Program`` of the Python file at ``path`` (resolved) from the lowering
    worker's successful ``result``."""
    mesh = result["mesh"]
    if mesh is None:
        # Without MESH, the mesh the program's own shardings are on (as for a .mlir file).
        mesh = own_mesh(result["mlir_text"])
    return Program(
        name=path.stem,
        source=str(path),
        kind="python",
        path=str(path),
        mlir_text=result["mlir_text"],
        mesh=mesh,
        specs=result["specs"],
        params=params,
        load_seconds=result["seconds"],
        warnings=tuple(result.get("warnings", ())),
    )


def python_source(source: str) -> tuple[Path, dict[str, str], str | None] | None:
    """Where ``source`` names a Python program that exists (a regular ``.py`` file or a
    built-in example): its resolved path, its parameters and the example's name (None for
    a file); None for every other source, which ``load_program`` loads or refuses."""
    base, params = split_source(source)
    if base.startswith(EXAMPLE_PREFIX):
        name = base[len(EXAMPLE_PREFIX) :]
        path = EXAMPLES_DIR / f"{name}.py"
        if name not in list_examples() or not path.is_file():
            return None
        return path.resolve(), params, name
    if ".json#" in base or not base.endswith(".py"):
        return None
    path = Path(base).expanduser()
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
    except OSError:
        return None
    return path.resolve(), params, None


def _lower_in_worker(
    path: Path,
    params: dict[str, str],
    timeout: float,
    while_waiting: Callable[[], object] | None,
    devices: int | None = None,
) -> dict:
    """The lowering worker's result for ``path``; with ``devices`` the program sees that
    many fake CPU devices, else the worker's default."""
    with tempfile.TemporaryDirectory(prefix="shardscope-load-") as tmp:
        out = Path(tmp) / "result.json"
        argv = [str(path), json.dumps(params), str(out)]
        if devices is not None:
            argv.append(str(devices))
        job = WorkerJob(
            LOWER_WORKER,
            tuple(argv),
            cwd=path.parent,
            log=Path(tmp) / "stderr.txt",
            timeout=timeout,
        )
        try:
            returncode = _run_in_fork_server(job, while_waiting)
            if returncode is None:
                returncode = run_worker(job, while_waiting)
        except WorkerTimeout as exc:
            raise ProgramError(program_timeout_message(path, exc)) from None
        except KilledItsParent as exc:
            raise ProgramError(exc.message(str(path))) from None
        if not out.exists():
            raise ProgramError(_crash_message(path, job.crash(returncode)))
        return json.loads(out.read_text())


def _run_in_fork_server(job: WorkerJob, while_waiting: Callable[[], object] | None) -> int | None:
    """Load through the warm fork server; the worker's exit code, or None when the server
    is busy with another load or broken (the caller then starts a fresh worker)."""
    server = shared_server()
    if not server.try_acquire():
        return None
    try:
        return server.run(job, while_waiting)
    except ForkServerError:
        return None
    finally:
        server.release()


def program_timeout_message(path: Path, timeout: WorkerTimeout) -> str:
    """The user's line for a program whose loading ran past its limit."""
    return (
        f"{path}: {timeout.message('loading')} (does the program loop or wait forever?); "
        f"fix it, or allow more time with --timeout"
    )


def _crash_message(path: Path, crash: Crash) -> str:
    if crash.out_of_memory:
        return f"{path}: {memory_message('loading this program', memory_limit())}"
    detail = f" (last output: {crash.last_line})" if crash.last_line else ""
    return (
        f"{path}: the worker loading this program {crash.how}{detail}; the program or the "
        f"compiler crashed: run the file with python directly to see the full error"
    )
