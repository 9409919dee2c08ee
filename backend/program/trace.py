"""Trace and lower a user's function with its example arguments, mesh and specs.

The one place that turns what a user holds (a function or a ``jax.jit`` object, example
arguments, a mesh as a dict, ``Mesh`` or ``AbstractMesh``, specs as a flat dict of names or
as a pytree prefix like ``jax.jit``'s ``in_shardings``) into a lowered module and the flat
mesh and specs the rest of shardscope reads. The lowering worker (``lower``) calls it on a
program file's globals; the Python API calls it in the user's own process. It runs user
code: never in a process that must survive it.

Lowering needs no devices: a dict or abstract mesh is entered with
``jax.sharding.use_abstract_mesh``; a concrete ``Mesh`` (which the caller could only build
with its devices) with ``jax.set_mesh``, so a ``shard_map`` over that same mesh lowers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.program.graph import name_forms
from shardscope.backend.program.traced_call import program_call
from shardscope.backend.sharding.mesh import MAX_DEVICES
from shardscope.backend.sharding.spec import parse_spec


class TraceError(ShardscopeError, ValueError):
    """The user's mesh, specs or arguments do not fit together (a one-line message)."""


class MeshTooLarge(TraceError):
    """A mesh with more devices than shardscope shows."""


@dataclass
class Traced:
    """A lowered module and the flat mesh and specs that go with it."""

    name: str
    mlir_text: str
    # Axis name -> size, or None where nothing names a mesh.
    mesh: dict[str, int] | None
    # Argument key path (``params['w1']``) -> spec entries (``[None, "model"]``).
    specs: dict[str, list]
    # What the user should know of the specs that did not apply (one line each).
    warnings: tuple[str, ...] = ()


def abstract_mesh(mesh: Any) -> AbstractMesh | None:
    """The abstract mesh of a dict (Auto axes), a ``Mesh`` or an ``AbstractMesh`` (their
    axis types kept); None for None."""
    if mesh is None:
        return None
    if isinstance(mesh, Mesh):
        return mesh.abstract_mesh
    if isinstance(mesh, AbstractMesh):
        return _not_too_large(mesh)
    if isinstance(mesh, Mapping):
        if not mesh or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1
            for k, v in mesh.items()
        ):
            raise TraceError(
                "a mesh dict maps axis names to sizes >= 1, like {'data': 4, 'model': 2}"
            )
        return _not_too_large(
            AbstractMesh(tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh))
        )
    raise TraceError(
        f"the mesh is a {type(mesh).__name__}: give a dict of axis sizes, a "
        f"jax.sharding.Mesh or a jax.sharding.AbstractMesh"
    )


def _not_too_large(mesh: AbstractMesh) -> AbstractMesh:
    size = math.prod(mesh.axis_sizes)
    if size > MAX_DEVICES:
        sizes = ", ".join(f"{n}={s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))
        shown = f"{size:,}" if size < 10**30 else f"about 10^{len(str(size)) - 1}"
        raise MeshTooLarge(
            f"the mesh ({sizes}) has {shown} devices, more than shardscope shows "
            f"({MAX_DEVICES:,}): use smaller axis sizes"
        )
    return mesh


def mesh_dict(mesh: AbstractMesh | None) -> dict[str, int] | None:
    """Axis name -> size of ``mesh``; None for None or a mesh without axes."""
    if mesh is None or not mesh.axis_names:
        return None
    return dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))


def spec_entries(spec: Any) -> list:
    """The JSON form of a ``PartitionSpec`` (or a ``NamedSharding``'s): one entry per dim,
    None, an axis name or a list of axis names."""
    if isinstance(spec, NamedSharding):
        spec = spec.spec
    if not isinstance(spec, PartitionSpec | tuple | list):
        raise TraceError(
            f"a spec must be a jax.sharding.PartitionSpec (P('data', None)) or a "
            f"NamedSharding, not {type(spec).__name__}"
        )
    entries: list = []
    for entry in spec:
        if entry is None:
            entries.append(None)
        elif isinstance(entry, tuple | list):
            entries.append([str(e) for e in entry])
        else:
            entries.append(str(entry))
    return entries


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec | NamedSharding)


def sharding_mesh(tree: Any) -> AbstractMesh | None:
    """The mesh of the first ``NamedSharding`` in a pytree of shardings, if any."""
    for leaf in jax.tree.leaves(tree, is_leaf=_is_spec_leaf):
        if isinstance(leaf, NamedSharding):
            return abstract_mesh(leaf.mesh)
    return None


def flat_specs(specs: Any, args: tuple, kwargs: dict, names: tuple[str, ...]) -> dict[str, list]:
    """Specs by argument name: a dict of names is checked and kept; a pytree prefix of the
    positional arguments (a tuple with one entry per argument, or one entry for all, as
    ``jax.jit``'s ``in_shardings``) is spread over their leaves, None leaving a leaf
    unspecified."""
    if specs is None:
        return {}
    if isinstance(specs, Mapping):
        return {str(k): spec_entries(v) for k, v in specs.items() if v is not None}
    prefix = specs
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    if not isinstance(prefix, tuple) or isinstance(prefix, PartitionSpec):
        prefix = (prefix,) * len(args)
    if len(prefix) != len(args):
        raise TraceError(
            f"the shardings have {len(prefix)} entries for {len(args)} positional "
            f"argument(s): give one per argument, as jax.jit's in_shardings"
        )
    try:
        full = jax.tree.broadcast(prefix, tuple(args), is_leaf=_is_spec_leaf)
    except (ValueError, TypeError) as exc:
        raise TraceError(
            f"the shardings are not a tree prefix of the arguments ({str(exc).splitlines()[0]}); "
            f"give one entry per argument, a PartitionSpec or None"
        ) from None
    # Flattened as the arguments are: a spec under a None (empty) argument is no leaf.
    flat = jax.tree.structure(tuple(args)).flatten_up_to(full)
    out: dict[str, list] = {}
    # JAX names positional leaves first, in flattening order; keyword arguments follow.
    for name, spec in zip(names, flat, strict=False):
        if spec is not None:
            out[name] = spec_entries(spec)
    return out


def _enter(mesh: Any, abstract: AbstractMesh | None):
    if isinstance(mesh, Mesh):
        return jax.set_mesh(mesh)
    if abstract is not None:
        return jax.sharding.use_abstract_mesh(abstract)
    return _Nothing()


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _by_own_names(
    flat: dict[str, list], names: tuple[str, ...], renamed: dict[str, str]
) -> dict[str, list]:
    """Specs keyed by the lowered module's names: JAX's names of the same arguments
    (``model.w1.value``, ``model.states[0][1]``) become the user's."""
    known = set(names)
    out: dict[str, list] = {}
    for key, spec in flat.items():
        if key not in known:
            key = renamed.get(key, key)
        out[canonical_name(key, known)] = spec
    return out


def canonical_name(name: str, known: set[str] | frozenset[str]) -> str:
    """``name`` as one of ``known`` names it: the user's path of an nnx Variable
    (``model.w1``) and JAX's (``model.w1.value``) name one argument; ``name`` itself where
    neither form is known."""
    if name in known:
        return name
    other = name_forms(name)[1]
    return other if other in known else name


def lower_function(
    fn: Callable,
    args: tuple,
    kwargs: dict | None = None,
    *,
    mesh: Any = None,
    specs: Any = None,
) -> Traced:
    """Trace and lower ``fn(*args, **kwargs)`` for the CPU, on ``mesh`` (or the mesh of the
    shardings in ``specs``) with ``specs`` as the user's own specs.

    Non-array leaves of the arguments are closed over, as ``eqx.filter_jit`` does. An
    ``nnx.jit`` object is lowered as it compiles: on its split state, its updates among
    the results. Where the mesh has Explicit axes, the arguments carry their specs in
    their types (as arrays placed with ``jax.device_put`` would), since JAX traces
    Explicit shardings; on Auto axes the specs stay the user's, for propagation to spread.
    Specs may name an argument by the user's path or by JAX's. Exceptions from user code
    pass through; mismatched inputs raise ``TraceError``.
    """
    kwargs = dict(kwargs or {})
    args = tuple(args)
    abstract = abstract_mesh(mesh)
    if abstract is None:
        abstract = sharding_mesh(specs)
    if abstract is None and not isinstance(mesh, Mesh):
        current = jax.sharding.get_abstract_mesh()
        abstract = current if current.axis_names else None
    call, name = program_call(fn, args, kwargs)
    with _enter(mesh, abstract):
        traced, typed = _first_trace(call, specs, abstract)
        jax_names = tuple(traced.jaxpr.debug_info.arg_names or ())
        flat, renamed, names = _flat_by_name(call, specs, jax_names)
        explicit = abstract is not None and AxisType.Explicit in abstract.axis_types
        if flat and explicit and not typed:
            leaf_specs = [flat.get(n) for n in names[: call.positional]]
            traced = call.trace(leaf_specs, abstract)
        lowered = traced.lower(lowering_platforms=("cpu",))
        text = lowered.as_text(debug_info=True)
    for old, new in renamed.items():
        text = text.replace(f'loc("{old}")', f'loc("{new}")')
    flat, warnings = _without_dropped(flat, names, lowered)
    return Traced(name, text, mesh_dict(abstract), flat, warnings)


def _without_dropped(
    flat: dict[str, list], names: tuple[str, ...], lowered: Any
) -> tuple[dict[str, list], tuple[str, ...]]:
    """``flat`` less the specs of arguments the lowered module leaves out (``jax.jit``
    drops one whose values the program never reads, such as one used only for its
    shape: ``Lowered._lowering.compile_args['kept_var_idx']`` in jax 0.10.2), and a
    warning for each."""
    kept = getattr(getattr(lowered, "_lowering", None), "compile_args", {}).get("kept_var_idx")
    if kept is None:
        return flat, ()
    dropped = [n for i, n in enumerate(names) if i not in kept and n in flat]
    warnings = tuple(
        f"the spec of {n} in SPECS shards nothing: the program never reads its values (at "
        f"most its shape), so jax.jit leaves it out of the compiled program"
        for n in dropped
    )
    return {k: v for k, v in flat.items() if k not in dropped}, warnings


def _flat_by_name(
    call: Any, specs: Any, jax_names: tuple[str, ...]
) -> tuple[dict[str, list], dict[str, str], tuple[str, ...]]:
    """The user's specs by the lowered module's name of each argument (``jax_names``:
    JAX's), with the user's name of each JAX name that has one and every argument's
    name in order."""
    renamed = call.names(jax_names)
    names = tuple(renamed.get(n, n) for n in jax_names)
    spec_args, spec_names = call.spec_view(specs, renamed, jax_names)
    flat = flat_specs(specs, spec_args, call.kwargs, spec_names)
    return _by_own_names(flat, names, renamed), renamed, names


def _first_trace(call: Any, specs: Any, abstract: AbstractMesh | None) -> tuple[Any, bool]:
    """The program traced on its arguments as they are, and False; where that fails and
    there are specs, traced with the specs in the arguments' types, and True: a
    ``shard_map`` given its own mesh of Explicit axes refuses arguments whose types do
    not carry its ``in_specs``. The first error stands unless the second is the
    shard_map's refusal of the mesh in context (``shard_map_axis_types``), which a
    caller can mend by tracing on the shard_map's axis types."""
    try:
        return call.trace(), False
    except Exception as exc:
        if not specs or abstract is None:
            raise
        jax_names = call.arg_names()
        if jax_names is None:
            raise
        flat, _, names = _flat_by_name(call, specs, jax_names)
        if not flat:
            raise
        try:
            return call.trace([flat.get(n) for n in names[: call.positional]], abstract), True
        except Exception as again:
            if shard_map_axis_types(again) is None:
                raise exc from None
            raise


# jax 0.10.2's refusal of a shard_map whose mesh= differs from the mesh in context: the
# context's axes (names and sizes) and the shard_map mesh's, with its axis types last;
# a concrete mesh's abstract mesh in context names its device kind after its types.
_SHARD_MAP_MESH = re.compile(
    r"The context mesh AbstractMesh\((?P<context>[^)]*?),? axis_types=\([^)]*\)[^)]*\) should "
    r"match the mesh passed to shard_map (?:Abstract)?Mesh\((?P<own>[^)]*?),? "
    r"axis_types=\((?P<types>[^)]*)\)"
)


def shard_map_axis_types(exc: BaseException) -> dict[str, str] | None:
    """Axis name -> type (``Explicit``...) of the mesh a shard_map was given where JAX
    refused it (``exc``) only because the mesh in context has the same axes of other
    types (a ``MESH`` dict's axes are Auto; ``jax.make_mesh``'s Explicit); None for any
    other error."""
    match = _SHARD_MAP_MESH.search(str(exc))
    if match is None or match["context"] != match["own"]:
        return None
    names = re.findall(r"'([^']*)':", match["own"])
    types = [t.strip() for t in match["types"].split(",") if t.strip()]
    if len(names) != len(types):
        return None
    return dict(zip(names, types, strict=True))


def lower_staged(staged: Any) -> Traced:
    """The module of a ``jax.stages.Lowered`` or ``Traced``: what its own shardings say."""
    if hasattr(staged, "lower") and not hasattr(staged, "as_text"):
        staged = staged.lower(lowering_platforms=("cpu",))
    text = staged.as_text(debug_info=True)
    match = re.search(r"^module @(?:jit_)?([\w.]+)", text, re.MULTILINE)
    return Traced(match.group(1) if match else "program", text, None, {})


def constrain_results(program: Any, result_specs: dict[int, str], jmesh: Mesh) -> Any:
    """``program`` with a sharding constraint on each flat result that has a spec
    (``result_specs``: flat result index -> spec text)."""

    def constrained(*args, **kwargs):
        leaves, tree = jax.tree.flatten(program(*args, **kwargs))
        for i, text in result_specs.items():
            if i < len(leaves):
                spec = parse_spec(text).padded(leaves[i].ndim)
                leaves[i] = jax.lax.with_sharding_constraint(
                    leaves[i], NamedSharding(jmesh, spec.to_jax())
                )
        return jax.tree.unflatten(tree, leaves)

    return constrained
