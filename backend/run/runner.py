"""Run a loaded Python program on the attached devices (``dispatch.run`` sends it here).

``run_python(request)`` compiles and runs the program in a worker process
(``run.worker``) and returns a ``RunResult``. The devices are an accelerator's when one
is installed (a JAX GPU or TPU plugin; JAX picks it), otherwise fake CPU devices, as many
as the mesh has, up to ``SHARDSCOPE_RUN_CPU_DEVICES`` (default 64). A mesh larger than
that, or than the accelerator's devices, is refused in one line that names both numbers.
Whatever happens in the worker (an exception, a compiler abort, running out of memory,
a hang past ``timeout``) is a one-line ``ShardscopeError``; the caller carries on.

A request with ``hosts=H`` runs it as H local processes on JAX's distributed runtime instead, each with
``mesh.size / H`` fake CPU devices (``hosts_run``), one result for them all.

Specs apply to arguments (``x``, ``params['w1']``: their ``NamedSharding``) and results
(``result[i]``: a sharding constraint on the output); specs on intermediates cannot be
placed in the program's code and are listed in ``notes``. Unnamed arguments are left to
the compiler, as ``jax.jit`` does.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError, SpecError, shortened
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.program.consent import runnable_file
from shardscope.backend.propagation.annotate import SpecLike, as_spec
from shardscope.backend.propagation.propagate import own_mesh
from shardscope.backend.run.cancel import CANCELLED, Cancel, RunCancelled
from shardscope.backend.run.inputs import SEED
from shardscope.backend.run.report import report_result
from shardscope.backend.run.request import RunRequest
from shardscope.backend.run.result import (
    RunResult,
)
from shardscope.backend.run.worker_setup import (
    WHAT,
    WORKER,
    accelerator_installed,
    check_device_count,
    run_environment,
)
from shardscope.backend.sharding.hosts import Hosts, apply_hosts
from shardscope.backend.sharding.mesh import Mesh

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph, Value
    from shardscope.backend.program.load import Program
    from shardscope.backend.propagation.result import PropagationResult


def split_specs(
    program: Program, specs: Mapping[str | int, SpecLike]
) -> tuple[dict[str, str], dict[int, str], list[str]]:
    """Argument specs by the program's argument name, result specs by flat index, and notes
    for the rest. An argument goes by its own name or any other the graph knows it by (an
    nnx Variable's ``model.w1`` and JAX's ``model.w1.value``); a name that matches no
    value is a ``SpecError`` naming the close ones."""
    args: dict[str, str] = {}
    results: dict[int, str] = {}
    notes = []
    graph = program.graph
    names = set(program.arg_names)
    n_results = len(program.result_names)
    for key, value in specs.items():
        text = as_spec(value).format()
        if isinstance(key, str) and key.startswith("result[") and key.endswith("]"):
            index = key[len("result[") : -1]
            if not index.isdigit() or int(index) >= n_results:
                raise SpecError(
                    f"{key}: the program has {n_results} results; name result[0] to "
                    f"result[{n_results - 1}]"
                )
            results[int(index)] = text
            continue
        found = _value_of(graph, key)
        if found is not None and found.name in names:
            args[found.name] = text
        elif found is not None:
            notes.append(
                f"the spec on {key} was not applied: a run places specs on arguments and "
                f"results only"
            )
        else:
            shown = repr(key) if len(repr(key)) <= 80 else f"{repr(key)[:60]}..."
            raise SpecError(
                f"{shown} names no argument or result of {program.name}; name one such as "
                f"{', '.join(graph.close_names(str(key)))}"
            )
    return args, results, notes


def _value_of(graph: ProgramGraph, key: str | int) -> Value | None:
    """The value ``key`` names: its id, an argument's or result's name, its name as the
    window shows it, or an SSA name such as ``%3`` (the first value of that name)."""
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        index = int(key)
        return graph.values[index] if 0 <= index < len(graph.values) else None
    found = graph.value_by_name(key)
    if found is not None:
        return found
    for v in graph.values:
        if v.display_name == key:
            return v
    if key.startswith("%"):
        return next((v for v in graph.values if v.display_name.rsplit(" ", 1)[-1] == key), None)
    return None


@dataclass
class RunPlan:
    """A checked run: the program, its mesh, the worker's job and notes on the specs,
    and the hosts it runs on (``sharding.hosts``; one unless ``hosts`` or ``dcn`` say
    otherwise)."""

    program: Program
    mesh: Mesh
    job: dict
    notes: list[str]
    hosts: Hosts = field(default_factory=lambda: Hosts(1, 1))

    def __post_init__(self) -> None:
        if self.hosts.devices != self.mesh.size:
            self.hosts = Hosts(self.hosts.count, self.mesh.size)


def plan_run(request: RunRequest) -> RunPlan:
    """Check the run ``request`` asks for (of a loaded Python program) and write its
    worker's job.

    Raises ``ShardscopeError`` for a program that is not Python, specs on axes the mesh
    lacks, a mesh larger than the CPU devices a run may have and one the hosts do not
    split evenly (``sharding.hosts.apply_hosts``, which lays the mesh out over the hosts
    ``dcn`` names); ``consent.SourceNotAllowed`` for a session's Python file the user has
    not allowed to run.
    """
    program = request.program
    path = runnable_file(program, "run")
    mesh = _as_mesh(request.mesh if request.mesh is not None else own_mesh(program))
    mesh, on_hosts = apply_hosts(mesh, request.hosts, request.dcn)
    specs = request.specs if request.specs is not None else (program.specs or {})
    arg_specs, result_specs, notes = split_specs(program, specs)
    for name, text in arg_specs.items():
        _check_axes(name, text, mesh)
    for index, text in result_specs.items():
        _check_axes(f"result[{index}]", text, mesh)
    if not accelerator_installed():
        check_device_count(mesh)
    job = {
        "path": path,
        "cwd": str(Path(path).parent),
        "params": dict(program.params or {}),
        "mesh": mesh.to_json(),
        "cpu_devices": mesh.size,
        "arg_names": program.arg_names,
        "specs": arg_specs,
        "result_specs": {str(k): v for k, v in result_specs.items()},
        "seed": SEED if request.seed is None else request.seed,
        "runs": request.runs,
        "reference": request.reference,
        "values": request.values,
    }
    return RunPlan(program, mesh, job, notes, on_hosts)


def run_python(request: RunRequest) -> RunResult:
    """Compile and run the loaded Python program ``request`` names in a worker (on its
    hosts, as several processes, where it asks for them); what it found."""
    plan = plan_run(request)
    return execute(
        plan, timeout=request.timeout, propagation=request.propagation, cancel=request.cancel
    )


class _OnHosts(Exception):  # noqa: N818 - a signal between two functions, not an error
    """A plan function's plan runs on several hosts: ``execute`` runs it so."""


def execute(
    plan: RunPlan | Callable[[], RunPlan],
    *,
    timeout: float = 300.0,
    propagation: PropagationResult | None = None,
    cancel: Cancel | None = None,
) -> RunResult:
    """Run ``plan`` in a worker. ``plan`` may be a function that returns it once the
    program is loaded: the worker starts at once and imports JAX meanwhile (the time
    limit starts when the plan is there); what the function raises is raised here.
    ``cancel`` may stop it from another thread (``RunCancelled``). A plan on several
    hosts (``RunPlan.hosts``) runs as that many processes (``hosts_run.run_hosts``);
    a plan function's is known once it returns, and that worker then gives way to them."""
    if cancel is not None and cancel.cancelled:
        raise RunCancelled(CANCELLED)  # before any worker starts
    if not callable(plan) and plan.hosts.count > 1:
        return _execute_on_hosts(plan, timeout, propagation, cancel)
    plans: list[RunPlan] = []

    with tempfile.TemporaryDirectory(prefix="shardscope-run-") as tmp:
        log = Path(tmp) / "stderr.txt"

        def job() -> dict:
            plans.append(plan() if callable(plan) else plan)
            if plans[0].hosts.count > 1:
                raise _OnHosts
            extra = cancel._attach(Path(tmp)) if cancel is not None else {}
            return {**plans[0].job, "timeout": timeout, **extra}

        try:
            report = run_json_worker(
                WORKER,
                job if callable(plan) or cancel is not None else job(),
                what=WHAT,
                cwd=Path.cwd(),
                timeout=timeout,
                env=run_environment(accelerator_installed()),
                log=log,
            )
        except _OnHosts:
            return _execute_on_hosts(plans[0], timeout, propagation, cancel)
        except ShardscopeError as exc:
            if cancel is not None and cancel.cancelled:
                raise RunCancelled(CANCELLED) from None
            if plans and str(exc).startswith(f"{WHAT} crashed"):
                raise ShardscopeError(
                    f"{plans[0].program.name}: {exc}; the program or the compiler crashed: "
                    f"run the file with python directly to see the full error"
                ) from None
            raise
        log_text = log.read_text(errors="replace") if log.exists() else ""
    done = plans[0]
    return report_result(done.program.name, done.mesh, report, log_text, done.notes, propagation)


def _execute_on_hosts(
    plan: RunPlan,
    timeout: float,
    propagation: PropagationResult | None,
    cancel: Cancel | None,
) -> RunResult:
    """Run ``plan`` on its hosts, fake CPU devices each; one result for them all."""
    from shardscope.backend.run.host_reports import hosted_result, merge_reports
    from shardscope.backend.run.hosts_run import run_hosts

    done = run_hosts(
        plan.job,
        plan.hosts.count,
        timeout=timeout,
        cwd=Path.cwd(),
        env=run_environment(False),
        cancel=cancel,
    )
    report = merge_reports(done.reports)
    result = report_result(
        plan.program.name, plan.mesh, report, done.logs[0], plan.notes, propagation
    )
    return hosted_result(result, plan.hosts)


def _as_mesh(mesh: Mesh | Mapping[str, int] | None) -> Mesh:
    if mesh is None:
        raise SpecError("the program has no mesh: give one with --mesh, e.g. --mesh data=4,model=2")
    return mesh if isinstance(mesh, Mesh) else Mesh.from_dict(dict(mesh))


def _check_axes(name: str, text: str, mesh: Mesh) -> None:
    from shardscope.backend.sharding.spec import parse_spec

    for axis in parse_spec(text).used_axes:
        base = axis.split(":")[0]
        if base not in mesh.shape:
            raise SpecError(
                f"the spec on {name} names axis {shortened(base)}, which the mesh {mesh.describe()} "
                f"lacks: use one of {', '.join(mesh.axis_names)}"
            )
