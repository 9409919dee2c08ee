"""Run a program on the attached devices: ``run(request)``, the entry point the CLI, the
window and the API call.

The run goes by what the request's program is (``request``): a Python file not loaded
yet runs in one worker that loads and runs it (``source``); a loaded Python program in
a worker of its own (``runner``); a program with no Python to call (a ``.mlir`` module, a
capture), loaded or loaded meanwhile, runs its module on seeded inputs (``module_run``).
A Python program on several hosts runs as that many processes (``hosts_run``). Whatever
happens in a worker is a one-line ``ShardscopeError``; the caller carries on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.request import ProgramFile, ProgramLoader, RunDone, RunRequest

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.run.result import RunResult
    from shardscope.backend.sharding.mesh import Mesh

# The refusal of ``--hosts`` for a program whose module, not Python, is run.
MODULE_ON_HOSTS = (
    "{name}: --hosts runs a Python program (a .py file or example:NAME) as several "
    "processes, and this program is a StableHLO module or a capture with no Python to "
    "run: run it without --hosts, or run the Python file it came from"
)


def run(request: RunRequest) -> RunDone:
    """Run what ``request`` asks for; the result and the program's own mesh.

    Raises ``ShardscopeError`` (one line) for bad input (a spec on an axis the mesh lacks,
    a mesh too large for the devices, ``--hosts`` for a program with no Python to call)
    and whatever goes wrong in a worker; ``RunCancelled`` once ``request.cancel`` is.
    """
    # Each kind's runner is imported when it runs: a Python file's (``source``) stays
    # light, so that its worker starts before this process imports what reads the report.
    program = request.program
    if isinstance(program, ProgramFile):
        from shardscope.backend.run.source import run_file

        return run_file(program, request)
    if isinstance(program, ProgramLoader):
        return _run_loading(program, request)
    from shardscope.backend.run.module_run import run_seeded, runs_module

    if runs_module(program):
        if request.on_hosts:
            raise ShardscopeError(MODULE_ON_HOSTS.format(name=program.name))
        result, _ = run_seeded(request, lambda: (program, request.mesh))
        return RunDone(result, program.mesh)
    from shardscope.backend.run.runner import run_python

    return RunDone(run_python(request), program.mesh)


def _run_loading(loader: ProgramLoader, request: RunRequest) -> RunDone:
    """Run the module of the program ``loader`` loads while the worker starts."""
    from shardscope.backend.run.module_run import run_seeded

    def load() -> tuple[Program, Mesh | Mapping[str, int] | None]:
        program, mesh = loader.load()
        if request.on_hosts:
            raise ShardscopeError(MODULE_ON_HOSTS.format(name=program.name))
        return program, mesh

    result, program = run_seeded(request, load)
    return RunDone(result, program.mesh)


def run_program(
    program: Program,
    mesh: Mesh | Mapping[str, int] | None = None,
    specs: Mapping[str | int, SpecLike] | None = None,
    **options: Any,
) -> RunResult:
    """``run`` of a loaded ``program`` on ``mesh`` with ``specs``; its result. ``options``
    are the rest of a ``RunRequest`` (``runs=1``, ``timeout=60``, ``cancel=...``)."""
    return run(RunRequest(program, mesh, specs, **options)).result
