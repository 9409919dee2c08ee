"""How a run traces and lowers its program on the run's shardings (``program_run.run_loaded``).

A run from a program file has traced the program once already, to load it
(``trace.lower_function``: on the program's own mesh as an abstract mesh, its specs kept
apart). JAX keeps the jaxpr of a trace by the function, the types of its arguments and
the abstract mesh in context; a second ``jax.jit`` of the same function, traced on
arguments of the same types under an equal abstract mesh, with the run's shardings as
``jax.jit``'s ``in_shardings`` rather than on the arguments, reuses that jaxpr and only
lowers it (on jax 0.10.2 and example:transformer: the trace 0.23 s afresh, 0.002 s
reused; the lowered module's text the same). Shardings on the arguments themselves
(``ShapeDtypeStruct(..., sharding=)``) are part of their types, and trace afresh.

``lower_on`` does that where it can be sure the module is the one a fresh trace gives:
``PROGRAM`` is a plain function that ``trace.program_call`` handed to ``jax.jit`` as it
is (nothing closed over), the arguments are positional, the mesh's axes are all Auto
(Explicit shardings are part of the types) and nothing wraps the function (result
constraints). Otherwise it traces afresh, with the shardings on the arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, NamedSharding

from shardscope.backend.program.traced_call import trace_on_mesh


def lower_on(
    call: Any,
    structs: list[jax.ShapeDtypeStruct],
    jmesh: jax.sharding.Mesh,
    *,
    program: Any,
    own_mesh: Any,
    wrap: Callable[[Callable], Callable] | None = None,
) -> Any:
    """``call`` (``trace.program_call``'s) traced on ``structs`` (its flat arguments, with
    the run's shardings) and lowered, under ``jmesh``: a ``jax.stages.Lowered``. The
    load's trace is reused where ``reusable`` says so; ``program`` is the program's
    ``PROGRAM``, ``own_mesh`` its ``MESH``."""
    if wrap is None and reusable(call, structs, jmesh, program=program, own_mesh=own_mesh):
        abstract = AbstractMesh(
            tuple(jmesh.axis_sizes), tuple(jmesh.axis_names), axis_types=tuple(jmesh.axis_types)
        )
        plain = [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in structs]
        args = jax.tree.unflatten(jax.tree.structure(call.args), plain)
        shardings = jax.tree.unflatten(jax.tree.structure(call.args), [s.sharding for s in structs])
        with jax.sharding.use_abstract_mesh(abstract):
            traced = jax.jit(program, in_shardings=tuple(shardings)).trace(*args)
        with jax.set_mesh(jmesh):
            return traced.lower()
    traced = trace_on_mesh(call, jmesh, leaves=structs, wrap=wrap)
    with jax.set_mesh(jmesh):
        return traced.lower()


def reusable(
    call: Any, structs: list[jax.ShapeDtypeStruct], jmesh: Any, *, program: Any, own_mesh: Any
) -> bool:
    """Whether tracing ``program`` with ``in_shardings`` gives the module a fresh trace of
    ``call`` on ``structs`` gives (see the module's docstring)."""
    jitted = getattr(call, "jitted", None)
    if jitted is None or hasattr(program, "trace") or not callable(program):
        return False
    if getattr(jitted, "__wrapped__", None) is not program:
        return False  # a jax.jit object of the user's, or a function with leaves closed over
    if not isinstance(own_mesh, Mapping) or jax.tree.leaves(call.kwargs):
        return False
    if len(jax.tree.leaves(call.args)) != len(structs):
        return False
    if any(t != AxisType.Auto for t in jmesh.axis_types):
        return False
    shardings = [s.sharding for s in structs]
    return any(s is not None for s in shardings) and all(
        s is None or (isinstance(s, NamedSharding) and s.mesh == jmesh) for s in shardings
    )
