"""One run, asked for: ``RunRequest``, and what it gives back, ``RunDone``.

A request names the program three ways, and ``dispatch.run`` runs each its own way:

- a ``Program`` already loaded: its Python runs in a worker (``runner``), or, for a program
  with no Python to call (a ``.mlir`` module, a capture), its module runs on seeded inputs
  (``module_run``);
- a ``ProgramLoader``: a function that loads such a module's program (and its mesh) while
  the run's worker starts and imports JAX;
- a ``ProgramFile``: a Python file not loaded yet, which one worker loads and runs
  (``source``).

``hosts`` (and ``dcn``) run a Python program as that many processes on JAX's distributed
runtime (``hosts_run``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.run.worker_setup import DEFAULT_RUNS
from shardscope.backend.sharding.mesh import Mesh

if TYPE_CHECKING:
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.annotate import SpecLike
    from shardscope.backend.propagation.result import PropagationResult
    from shardscope.backend.run.cancel import Cancel
    from shardscope.backend.run.result import RunResult

# Seconds a run may take unless the request says otherwise.
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True)
class ProgramFile:
    """A Python program not loaded yet: its file (resolved, ``load.python_source``) and
    parameters, and what ``load_program`` would call it (``name``, ``source``, ``kind``).
    ``device_order`` (the device id at each row-major position) lays the program's own
    ``MESH`` out over the devices where the request gives no mesh."""

    path: Path
    params: Mapping[str, str]
    name: str
    source: str
    kind: str
    device_order: tuple[int, ...] | None = None


@dataclass(frozen=True)
class ProgramLoader:
    """A program with no Python to call, loaded while its run's worker starts: ``load()``
    gives the program and the mesh to run it on (None: its own)."""

    load: Callable[[], tuple[Program, Mesh | Mapping[str, int] | None]]


@dataclass(frozen=True)
class RunRequest:
    """Everything one run needs: the program, its mesh and specs, and how to run it.

    Without ``mesh`` / ``specs`` the program's own ``MESH`` / ``SPECS`` apply. ``runs``
    times the program that many times; ``seed`` seeds random inputs (None:
    ``inputs.SEED``). Without
    ``reference`` no unsharded run is made (``max_rel_error`` is None), without
    ``values`` no shard carries its values. ``hosts`` and ``dcn`` (the axes that span
    hosts: ``sharding.hosts.apply_hosts``) run it as several processes. ``timeout``
    limits the run (and, for a ``ProgramFile``, its loading apart). ``propagation``, a
    propagation of the same program, mesh and specs, gives the predicted collectives to
    match the compiled ones with; without it, ``predict`` has Shardy predict them beside a
    module's run. ``cancel`` stops the run from another thread (``RunCancelled``).
    """

    program: Program | ProgramFile | ProgramLoader
    mesh: Mesh | Mapping[str, int] | None = None
    specs: Mapping[str | int, SpecLike] | None = None
    runs: int = DEFAULT_RUNS
    seed: int | None = None
    reference: bool = True
    values: bool = True
    hosts: int | None = None
    dcn: str | Mapping[str, int] | None = None
    timeout: float = DEFAULT_TIMEOUT
    propagation: PropagationResult | None = None
    predict: bool = False
    cancel: Cancel | None = None

    @property
    def on_hosts(self) -> bool:
        """Whether the request asks for several processes (``hosts`` above 1, or ``dcn``)."""
        return (self.hosts is not None and self.hosts > 1) or bool(self.dcn)


@dataclass(frozen=True)
class RunDone:
    """What a run found, and the program's own mesh (for the note that a given mesh
    replaced it; None where the program has none)."""

    result: RunResult
    program_mesh: Mapping[str, int] | None
