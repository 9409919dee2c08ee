"""How a user's function is traced: the call that ``jax.jit``, an ``nnx.jit`` object or an
``eqx.filter_jit`` object makes, on the arguments as they are or on other leaves of the
same shapes (with shardings, for a run).

A plain function goes to ``jax.jit`` with its non-array leaves closed over, as
``eqx.filter_jit`` splits them; an ``nnx.jit`` object traces its own ``jax.jit`` on the
state nnx splits its arguments into, each flat argument named by the user's path of
its Variable. It runs user code: never in a process that must survive it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec


def is_array(x: Any) -> bool:
    """What ``jax.jit`` traces as an array: arrays, ``ShapeDtypeStruct`` and scalars."""
    if isinstance(x, bool | int | float | complex):
        return True
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _is_none(x: Any) -> bool:
    return x is None


# Marks a leaf of ``split_static``'s static list that the traced arguments carry.
_DYNAMIC = object()


def split_static(
    args: tuple, kwargs: dict, traced: Callable[[Any], bool] = is_array, *, always: bool = False
) -> tuple[tuple, dict, Any, Any] | None:
    """Arrays apart from the rest, as ``eqx.filter_jit`` does: ``(args, kwargs)`` with every
    leaf that ``traced`` refuses set to None, plus the trees that put them back; None if
    every leaf is traced (unless ``always``). None fields (optax's and Equinox's states
    hold them) are leaves here and stay None."""
    leaves, treedef = jax.tree.flatten((args, kwargs), is_leaf=_is_none)
    if not always and all(x is None or traced(x) for x in leaves):
        return None
    dynamic = [x if x is not None and traced(x) else None for x in leaves]
    static = [_DYNAMIC if x is not None and traced(x) else x for x in leaves]
    dyn_args, dyn_kwargs = jax.tree.unflatten(treedef, dynamic)
    return dyn_args, dyn_kwargs, treedef, static


def close_over_static(
    fn: Callable,
    treedef: Any,
    static: list,
    traced: Callable[[Any], bool] = is_array,
    *,
    marker: bool = False,
) -> Callable:
    """``fn`` taking only the array leaves; its non-array leaves come from ``static``, and
    the leaves of its result that ``traced`` refuses (a returned Module's activation) are
    None, as ``eqx.filter_jit`` keeps them out of the compiled program. With ``marker``
    the result comes after the scalar ``eqx.filter_jit`` returns first (its function
    returns ``jnp.array(0)`` before the outputs). The wrapper keeps ``fn``'s name and
    signature, so JAX names its arguments as ``fn``'s."""

    @functools.wraps(fn)
    def with_static(*args, **kwargs):
        leaves = jax.tree.leaves((args, kwargs), is_leaf=_is_none)
        merged = [d if s is _DYNAMIC else s for d, s in zip(leaves, static, strict=True)]
        full_args, full_kwargs = jax.tree.unflatten(treedef, merged)
        out = fn(*full_args, **full_kwargs)
        out = jax.tree.map(lambda x: x if _returned(x, traced) else None, out)
        return (jax.numpy.array(0), out) if marker else out

    return with_static


def _returned(x: Any, traced: Callable[[Any], bool]) -> bool:
    # What the trace computed is an array (a tracer) whatever ``traced`` says of the rest.
    return isinstance(x, jax.Array) or traced(x)


def _with_sharding(args: tuple, specs_by_leaf: list, mesh: AbstractMesh) -> tuple:
    leaves, treedef = jax.tree.flatten(args)
    out = []
    for leaf, spec in zip(leaves, specs_by_leaf, strict=True):
        if spec is not None and hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            leaf = jax.ShapeDtypeStruct(
                leaf.shape, leaf.dtype, sharding=NamedSharding(mesh, PartitionSpec(*spec))
            )
        out.append(leaf)
    return jax.tree.unflatten(treedef, out)


def _is_nnx(x: Any, kind: str) -> bool:
    cls = type(x)
    return cls.__module__.startswith("flax.nnx") and any(c.__name__ == kind for c in cls.__mro__)


def _is_nnx_jit(fn: Any) -> bool:
    return (
        type(fn).__module__.startswith("flax.nnx")
        and hasattr(fn, "jitted_fn")
        and hasattr(fn, "_get_pure_args_kwargs")
    )


def _is_filter_jit(fn: Any) -> bool:
    return (
        type(fn).__module__.startswith("equinox")
        and hasattr(fn, "_cached")
        and callable(getattr(fn, "__wrapped__", None))
    )


def _equinox_traced(x: Any) -> bool:
    """What ``eqx.filter_jit`` traces (``eqx.is_array``: JAX and NumPy arrays), and the
    ``ShapeDtypeStruct``s that stand for arrays here; Python scalars stay static."""
    import equinox as eqx

    return bool(eqx.is_array(x)) or isinstance(x, jax.ShapeDtypeStruct)


def variable_names(args: tuple, kwargs: dict, names: tuple[str, ...]) -> dict[str, str]:
    """JAX's names of ``nnx.Variable`` values (``model.w1.value``) -> the user's
    (``model.w1``): an nnx Module flattens each Variable to one ``value`` leaf."""
    out: dict[str, str] = {}
    is_variable = []
    for leaf in jax.tree.leaves((args, kwargs), is_leaf=lambda x: _is_nnx(x, "Variable")):
        count = len(jax.tree.leaves(leaf)) if _is_nnx(leaf, "Variable") else 1
        is_variable += [_is_nnx(leaf, "Variable") and count == 1] * count
    for name, variable in zip(names, is_variable, strict=False):
        if variable and name.endswith(".value"):
            out[name] = name[: -len(".value")]
    return out


class _JaxCall:
    """``jax.jit`` (or the user's jit object) on the arguments as they are."""

    def __init__(self, jitted: Any, args: tuple, kwargs: dict) -> None:
        self.jitted, self.args, self.kwargs = jitted, args, kwargs
        self.positional = len(jax.tree.leaves(args))

    def trace(
        self,
        leaf_specs: list | None = None,
        mesh: AbstractMesh | None = None,
        *,
        leaves: list | None = None,
        wrap: Callable[[Callable], Callable] | None = None,
    ) -> Any:
        args, kwargs = self.args, self.kwargs
        if leaves is not None:
            args, kwargs = jax.tree.unflatten(jax.tree.structure((args, kwargs)), leaves)
        if leaf_specs is not None and mesh is not None:
            args = _with_sharding(args, leaf_specs, mesh)
        jitted = self.jitted if wrap is None else jax.jit(wrap(self.jitted))
        return jitted.trace(*args, **kwargs)

    def flat(self) -> tuple[list, Any]:
        """The flat arguments the compiled program takes, in its order, and their tree."""
        return jax.tree.flatten((self.args, self.kwargs))

    def arg_names(self) -> tuple[str, ...] | None:
        """JAX's name of each flat argument, without running the function: a function of
        the same signature that computes nothing, traced on the same arguments. None
        where that cannot stand for the function (a jit object with static arguments)."""
        fn = getattr(self.jitted, "__wrapped__", None)
        if not callable(fn):
            return None
        stub = functools.wraps(fn)(lambda *args, **kwargs: None)
        try:
            names = jax.jit(stub).trace(*self.args, **self.kwargs).jaxpr.debug_info.arg_names
        except Exception:  # noqa: BLE001 - static arguments the stub would trace
            return None
        names = tuple(names or ())
        return names if len(names) == len(jax.tree.leaves((self.args, self.kwargs))) else None

    def names(self, jax_names: tuple[str, ...]) -> dict[str, str]:
        return variable_names(self.args, self.kwargs, jax_names)

    def spec_view(self, specs: Any, renamed: dict[str, str], jax_names: tuple) -> tuple:
        return self.args, tuple(renamed.get(n, n) for n in jax_names)


class _NnxCall:
    """What an ``nnx.jit`` object compiles: its own ``jax.jit`` (``jitted_fn``) on the state
    nnx splits the graph nodes among the arguments into, as its ``trace`` does; the
    Variables' new values come back as results. Each flat argument is named by the user's
    path of its Variable (``model.w1.kernel``), not by nnx's split (``model.states[0][1]``)."""

    def __init__(self, fn: Any, args: tuple, kwargs: dict) -> None:
        from flax.nnx import graph as graphlib

        self.fn, self.args, self.kwargs, self.graphlib = fn, args, kwargs, graphlib
        self.pure: tuple = ((), {})
        self.positional = 0

    def trace(
        self,
        leaf_specs: list | None = None,
        mesh: AbstractMesh | None = None,
        *,
        leaves: list | None = None,
        wrap: Callable[[Callable], Callable] | None = None,
    ) -> Any:
        # The split and the trace share one update context, as in nnx.jit's own trace.
        with self.graphlib.update_context(self.fn):
            pure_args, pure_kwargs = self._split()
            if leaves is not None:
                tree = jax.tree.structure((pure_args, pure_kwargs))
                pure_args, pure_kwargs = jax.tree.unflatten(tree, leaves)
            if leaf_specs is not None and mesh is not None:
                pure_args = _with_sharding(pure_args, leaf_specs, mesh)
            jitted = self.fn.jitted_fn if wrap is None else jax.jit(wrap(self.fn.jitted_fn))
            return jitted.trace(*pure_args, **pure_kwargs)

    def _split(self) -> tuple:
        pure_args, pure_kwargs = self.fn._get_pure_args_kwargs(self.args, self.kwargs)
        self.pure = (pure_args, pure_kwargs)
        self.positional = len(jax.tree.leaves(pure_args))
        return pure_args, pure_kwargs

    def arg_names(self) -> tuple[str, ...] | None:
        """None: nnx's split names its arguments only as the function is traced."""
        return None

    def flat(self) -> tuple[list, Any]:
        """The flat arguments the compiled program takes, in its order, and their tree:
        the leaves of nnx's split state (each Variable's value) and of the others."""
        with self.graphlib.update_context(self.fn):
            return jax.tree.flatten(self._split())

    def _params(self, jax_names: tuple[str, ...]) -> dict[tuple, str]:
        """(args or kwargs, position or keyword) -> JAX's name of that parameter: a flat
        argument's name less its path inside the parameter."""
        out: dict[tuple, str] = {}
        leaves = jax.tree_util.tree_flatten_with_path(self.pure)[0]
        if len(leaves) != len(jax_names):
            return out
        for (path, _), name in zip(leaves, jax_names, strict=True):
            rest = jax.tree_util.keystr(path[2:])
            if len(name) > len(rest) and name.endswith(rest):
                out.setdefault(path[:2], name[: len(name) - len(rest)])
        return out

    def _user_names(self, params: dict[tuple, str]) -> dict[int, str]:
        """id of each Variable -> its path in the user's arguments (``model.w1.kernel``),
        where the Module flattens as a pytree."""
        keystr = jax.tree_util.keystr
        out: dict[int, str] = {}
        tree = jax.tree_util.tree_flatten_with_path(
            (self.args, self.kwargs), is_leaf=lambda x: _is_nnx(x, "Variable")
        )[0]
        for path, leaf in tree:
            if _is_nnx(leaf, "Variable") and path[:2] in params:
                out.setdefault(id(leaf), params[path[:2]] + keystr(path[2:]))
        return out

    def names(self, jax_names: tuple[str, ...]) -> dict[str, str]:
        graphlib = self.graphlib
        params = self._params(jax_names)
        users = self._user_names(params)
        self.users = users
        is_node = lambda x: _is_nnx(x, "Variable") or graphlib.is_graph_node(x)  # noqa: E731
        # Each graph node's Variables in the order nnx.jit splits them (one reference
        # index across the arguments: a Variable two arguments share is split once).
        nodes: dict[tuple, list] = {}
        ref_index = graphlib.RefMap()
        for path, leaf in jax.tree_util.tree_flatten_with_path(
            (self.args, self.kwargs), is_leaf=is_node
        )[0]:
            if is_node(leaf):
                _, flat = graphlib.flatten(leaf, ref_index=ref_index, with_paths=True, graph=True)
                nodes[path] = list(zip(flat.paths, flat.leaves, strict=True))
        out: dict[str, str] = {}
        leaves = jax.tree_util.tree_flatten_with_path(self.pure)[0]
        if len(leaves) != len(jax_names):
            return out
        for (path, _), name in zip(leaves, jax_names, strict=True):
            new = self._leaf_name(path, nodes, users, params)
            if new is not None:
                out[name] = new
        if len(set(out.values())) != len(out) or set(out.values()) & (set(jax_names) - set(out)):
            return {}  # two leaves would share a name: keep JAX's
        return out

    @staticmethod
    def _leaf_name(path: tuple, nodes: dict, users: dict, params: dict) -> str | None:
        for cut in range(len(path) - 2):
            states, first, index = path[cut : cut + 3]
            if (
                getattr(states, "name", None) == "states"
                and getattr(first, "idx", None) == 0
                and path[:cut] in nodes
                and isinstance(getattr(index, "idx", None), int)
            ):
                variables = nodes[path[:cut]]
                if index.idx >= len(variables):
                    return None
                nnx_path, variable = variables[index.idx]
                user = users.get(id(variable))
                if user is None:
                    param = params.get(path[:2])
                    if param is None:
                        return None
                    parts = "".join(f".{p}" if isinstance(p, str) else f"[{p}]" for p in nnx_path)
                    user = param + jax.tree_util.keystr(path[2:cut]) + parts
                return user + jax.tree_util.keystr(path[cut + 3 :])
        return None

    def spec_view(self, specs: Any, renamed: dict[str, str], jax_names: tuple) -> tuple:
        """The positional arguments as a spec prefix spreads over them (an ``nnx.State``
        prefix over its Module's state), and each leaf's name as the lowered module has it."""
        from flax import nnx

        params = self._params(jax_names)
        users = getattr(self, "users", None) or self._user_names(params)
        args = list(self.args)
        if isinstance(specs, tuple | list) and len(specs) == len(args):
            for i, (prefix, arg) in enumerate(zip(specs, args, strict=True)):
                if isinstance(prefix, nnx.State) and self.graphlib.is_graph_node(arg):
                    args[i] = nnx.state(arg)
        keystr = jax.tree_util.keystr
        names: list[str] = []
        tree = jax.tree_util.tree_flatten_with_path(
            tuple(args), is_leaf=lambda x: _is_nnx(x, "Variable")
        )[0]
        for path, leaf in tree:
            param = params.get((jax.tree_util.SequenceKey(0), path[0]), "")
            if _is_nnx(leaf, "Variable"):
                inner = jax.tree_util.tree_flatten_with_path(leaf)[0]
                user = users.get(id(leaf))
                for sub, _ in inner:
                    if user is not None and len(inner) == 1:
                        names.append(user)
                    else:
                        names.append(param + keystr(path[1:]) + keystr(sub))
            else:
                names.append(param + keystr(path[1:]))
        return tuple(args), tuple(names)


def program_call(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, str]:
    """How ``fn`` is traced, and its name: what the load lowers and a run compiles. A
    plain function goes to ``jax.jit`` with its non-array leaves closed over; an
    ``eqx.filter_jit`` object is its function traced as Equinox splits its arguments and
    results (its marker first among the results); an ``nnx.jit`` object traces itself.

    The call's ``flat()`` gives the compiled program's flat arguments, in the lowered
    module's order; ``trace(leaves=...)`` traces it on other leaves of the same shapes
    (``ShapeDtypeStruct``s with shardings, for a run), ``wrap`` around the jitted function
    (``constrain_results``); the compiled program takes
    ``jax.tree.unflatten(compiled.in_tree, leaves)``."""
    name = function_name(fn)
    if _is_nnx_jit(fn):
        return _NnxCall(fn, args, kwargs), name
    traced, equinox = is_array, _is_filter_jit(fn)
    if equinox:
        fn, traced = fn.__wrapped__, _equinox_traced
    split = split_static(args, kwargs, traced, always=equinox)
    # A jax.jit object takes its non-array arguments as its own static arguments.
    if split is not None and not hasattr(fn, "trace"):
        dyn_args, dyn_kwargs, treedef, static = split
        fn = close_over_static(fn, treedef, static, traced, marker=equinox)
        args, kwargs = dyn_args, dyn_kwargs
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    return _JaxCall(jitted, args, kwargs), name


def function_name(fn: Any) -> str:
    """The name a function (or a jit object around one) goes by."""
    inner = getattr(fn, "__wrapped__", None) or getattr(fn, "fun", None)
    for f in (fn, inner):
        name = getattr(f, "__name__", None)
        if isinstance(name, str) and name and name != "<lambda>":
            return name
    return "program"


# What jax 0.10.2's shard_map says when it refuses the mesh in context: one given no mesh=
# keeps the context mesh of its first call (``jax._src.shard_map._shard_map``'s
# ``wrapped``), so a module-level one traced at the load refuses a later mesh that is not
# equal to that one.
SHARD_MAP_BOUND = "should match the mesh passed to shard_map"


def trace_on_mesh(call: Any, jmesh: jax.sharding.Mesh, leaves: list, **kwargs: Any) -> Any:
    """``call.trace(leaves=leaves, **kwargs)`` (``program_call``'s ``call``; ``leaves``:
    ``ShapeDtypeStruct``s, some with shardings) under the concrete mesh ``jmesh``, to be
    lowered under ``jax.set_mesh(jmesh)``.

    A shard_map without mesh= that the load called first under ``jmesh``'s abstract mesh
    without its devices' kind (a dict ``MESH``'s) refuses ``jmesh``, whose abstract mesh
    names the devices' kind: the program is traced again under that abstract mesh. A
    trace there takes its devices only from the arguments' shardings (without one it
    lowers for one device), so where no argument has one, each is replicated on
    ``jmesh``."""
    try:
        with jax.set_mesh(jmesh):
            return call.trace(leaves=leaves, **kwargs)
    except ValueError as exc:
        if SHARD_MAP_BOUND not in str(exc):
            raise
    plain = AbstractMesh(
        tuple(jmesh.axis_sizes), tuple(jmesh.axis_names), axis_types=tuple(jmesh.axis_types)
    )
    if not any(isinstance(getattr(leaf, "sharding", None), NamedSharding) for leaf in leaves):
        replicated = NamedSharding(jmesh, PartitionSpec())
        leaves = [jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=replicated) for x in leaves]
    with jax.sharding.use_abstract_mesh(plain):
        return call.trace(leaves=leaves, **kwargs)
