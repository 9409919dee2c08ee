"""Loaded into the user's own Python by ``shardscope capture`` (this folder is put first on
``PYTHONPATH``), before their script runs: it counts the calls of every function the script
wraps in ``jax.jit``, and stops the script after a number of steps if asked.

JAX itself writes the module of every compile (``JAX_DUMP_IR_TO``); what this adds is which
of those are the script's own functions, where they are defined, and how often they ran. It
imports nothing of shardscope (the script may run in another environment) and does nothing
unless ``SHARDSCOPE_CAPTURE_DIR`` is set. It keeps ``functions.json`` there, one record per
jitted function (``calls``: its runs in all; ``compiles``: the file JAX dumped each of its
compiles to -> the runs of that compile) (and, in one of the processes of ``capture --hosts H``, how far that process
got: ``_shardscope_hosts``): rewritten whole (then renamed) at most every 0.1 s while calls
are counted, so that a script killed meanwhile keeps what it ran, and at exit or at the step
limit.

A function that ``nnx.jit`` or ``eqx.filter_jit`` compiles with ``jax.jit`` takes what the
library split the user's arguments into; JAX names those arguments by that split
(``model.states[0][1]``, ``dynamic_nodonate['rest'][0]``). Its record also holds
``arg_names``: JAX's name of each argument -> the user's path of the same array among the
arguments of the library's call (``model.w1.kernel``, an nnx Variable by its own path, not
its ``.value``), and its ``file`` and ``line`` are the user's function's. A function the
user jits and calls on nnx Variables (``nnx.split``'s state) has ``arg_names`` too:
``state['w1']['kernel'].value`` -> ``state['w1']['kernel']``.

A ``sitecustomize`` this one hides (later on ``sys.path``) still runs, after this one.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import sys
import threading
import time
import types

# Not in the Python that launches the captured command (``isolation.start.exec_command``,
# which replaces itself with the command): the command's own Python runs this.
_LAUNCHER = bool(os.environ.get("SHARDSCOPE_COMMAND_LAUNCHER"))
_DIR = None if _LAUNCHER else os.environ.get("SHARDSCOPE_CAPTURE_DIR")
_LIMIT = os.environ.get("SHARDSCOPE_CAPTURE_STEPS")

_records: list[dict] = []
# More of what ``functions.json`` says (``_shardscope_hosts``: the host, how far it got).
state: dict = {}
_lock = threading.Lock()
# Held while ``functions.json`` is written: by ``_keeper``, at exit, at the step limit.
_write_lock = threading.Lock()
_written = False
# Set when a record changed since ``functions.json`` was written.
_dirty = threading.Event()
_keeper_started = False
# Seconds between two writes while the records change.
_EVERY = 0.1


def _where(fun) -> tuple[str | None, int | None]:
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = getattr(fun, "__wrapped__", fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return None, None
    return code.co_filename, code.co_firstlineno


def _name(fun) -> str:
    """The name ``jax.jit`` gives ``fun``'s compiles (after ``jit_``)."""
    name = getattr(fun, "__name__", None)
    if name is not None:
        return str(name)
    if isinstance(fun, functools.partial):
        return _name(fun.func)
    return "<unnamed function>"


def _write(final: bool = False) -> None:
    """Write the records as they are now (once more after ``final``: never)."""
    global _written
    with _write_lock:
        if _written or _DIR is None:
            return
        _written = final
        with _lock:
            records = [
                {k: dict(v) if isinstance(v, dict) else v for k, v in r.items()} for r in _records
            ]
            more = dict(state)
        path = os.path.join(_DIR, "functions.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump({**more, "functions": records}, f)
        os.replace(path + ".tmp", path)


def _changed() -> None:
    """A record changed: have ``_keeper`` write it soon."""
    global _keeper_started
    with _lock:
        start, _keeper_started = not _keeper_started, True
    _dirty.set()
    if start:
        threading.Thread(target=_keeper, name="shardscope-capture", daemon=True).start()


def _keeper() -> None:
    """Keep ``functions.json`` as the records are, at most ``_EVERY`` seconds behind, so
    that a script stopped by a signal (capture's --timeout, Ctrl+C) keeps what it
    compiled and how often it ran it."""
    while True:
        _dirty.wait()
        _dirty.clear()
        try:
            _write()
        except OSError:
            pass  # capture's folder is gone: capture itself has ended
        time.sleep(_EVERY)


def _stop() -> None:
    """End the script at once (the step limit): records first, then a clean exit code."""
    _write(final=True)
    sys.stdout.flush()
    sys.stderr.flush()
    with open(os.path.join(_DIR, "stopped"), "w") as f:
        f.write("steps")
    os._exit(0)


# The compiles dumped during the run of a jitted function under way in this thread.
_local = threading.local()


class _Counted:
    """A ``jax.jit`` object that counts its calls, in all and per compile; everything else
    goes to the real one."""

    __slots__ = ("_jitted", "_record", "_fun", "_used", "_last", "__weakref__")

    def __init__(self, jitted, record: dict, fun=None) -> None:
        self._jitted = jitted
        self._record = record
        self._fun = fun
        # A call's arguments (``_signatures``) -> the dump of the compile it ran.
        self._used: dict = {}
        self._last: str | None = None

    def __call__(self, *args, **kwargs):
        record = self._record
        leaves, tree = _flatten((args, kwargs))
        if _tracing(leaves):  # a call traced into another function is not a run
            return self._jitted(*args, **kwargs)
        if _LIMIT is not None and record["calls"] >= int(_LIMIT):
            _stop()
        record["calls"] += 1
        _name_by_user(self, args, kwargs)
        _changed()
        outer, _local.dumps = getattr(_local, "dumps", None), []
        try:
            return self._jitted(*args, **kwargs)
        finally:
            dumps, _local.dumps = _local.dumps, outer
            _ran(self, tree, leaves, dumps)

    def __get__(self, obj, owner=None):
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __repr__(self) -> str:
        return repr(self._jitted)


def _signatures(tree, leaves) -> tuple[tuple, tuple]:
    """Two keys of a call's arguments: each array's type, shape, dtype and sharding (a
    JAX array's ``aval``, ``sharding`` and whether it is committed) with the other
    values themselves (hashed), and the same with the other values by type alone (for a
    value JAX does not compile for, such as a float that is not static)."""
    exact, loose = [tree], [tree]
    for leaf in leaves:
        if _Array is not None and isinstance(leaf, _Array):
            array = (leaf.aval, leaf.sharding, getattr(leaf, "_committed", None))
        elif hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            array = (type(leaf).__qualname__, tuple(leaf.shape), str(leaf.dtype))
        else:
            try:
                exact.append((type(leaf).__qualname__, hash(leaf)))
            except TypeError:
                exact.append((type(leaf).__qualname__, id(leaf)))
            loose.append(type(leaf).__qualname__)
            continue
        exact.append(array)
        loose.append(array)
    return ("exact", *exact), ("loose", *loose)


def _ran(counted, tree, leaves, dumps: list[str]) -> None:
    """Count a run of ``counted`` for the compile it ran: the one dumped during the call,
    else the one a call with the same arguments ran (exactly, else by type), else its
    last; none where JAX dumps nothing (``JAX_DUMP_IR_TO`` unset). Of the compiles dumped
    during the call, the last is the function's own: JAX compiles it after tracing it,
    and any eager operation the tracing ran was compiled before. While the function has
    one compile, a call that compiles nothing ran that one: its arguments are not read."""
    record = counted._record
    compiles = record.get("compiles") or {}
    if not dumps and len(compiles) < 2:
        dump = counted._last
    else:
        dump = _by_arguments(counted, _signatures(tree, leaves), dumps)
    if dump is None:
        return
    counted._last = dump
    with _lock:
        compiles = record.setdefault("compiles", {})
        compiles[dump] = compiles.get(dump, 0) + 1
    _changed()


def _by_arguments(counted, signatures: tuple[tuple, tuple], dumps: list[str]) -> str | None:
    """The dump of the compile a call ran, by its arguments' ``signatures`` (kept for
    the calls after it)."""
    used = counted._used
    try:
        hash(signatures)
    except TypeError:
        signatures = ()  # a sharding or static value that cannot be hashed: no key to keep
    if dumps:
        dump = dumps[-1]
    else:
        dump = next((used[k] for k in signatures if k in used), counted._last)
    if dump is not None:
        for key in signatures:
            used[key] = dump
    return dump


def _dumped(real):
    """JAX's ``dump_module_to_file``, telling the run under way in this thread of each
    compile it dumps."""

    @functools.wraps(real)
    def dump(module, stage_name, *args, **kwargs):
        name = real(module, stage_name, *args, **kwargs)
        dumps = getattr(_local, "dumps", None)
        if name is not None and dumps is not None and stage_name == "compile":
            dumps.append(name)
        return name

    return dump


_Tracer: type | None = None
_Array: type | None = None
_flatten = None
_with_paths = None
_keystr = None
# How many frames above a jitted function's call its library's own call may be.
_OWNER_DEPTH = 8
# The most argument names kept per function (distinct JAX names).
_MAX_NAMES = 100_000


def _library(value) -> bool:
    return type(value).__module__.split(".")[0] in ("flax", "equinox")


def _owner(counted):
    """The ``nnx.jit`` or ``eqx.filter_jit`` object that calls ``counted`` (its jitted
    function is ``counted``), with the user's arguments of that call; None otherwise."""
    frame = sys._getframe(3)
    for _ in range(_OWNER_DEPTH):
        if frame is None:
            return None
        local = frame.f_locals
        args, kwargs = local.get("args"), local.get("kwargs")
        if isinstance(args, tuple) and isinstance(kwargs, dict):
            for value in local.values():
                if _library(value) and any(
                    getattr(value, attr, None) is counted for attr in ("jitted_fn", "_cached")
                ):
                    return value, args, kwargs
        frame = frame.f_back
    return None


def _is_variable(x) -> bool:
    cls = type(x)
    return cls.__module__.startswith("flax.nnx") and any(
        c.__name__ == "Variable" for c in cls.__mro__
    )


def _bound(fun, args, kwargs):
    """(parameter name, value) of each argument of a call of ``fun``, as JAX names them."""
    import inspect

    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    return list(bound.arguments.items())


def _user_paths(fun, args, kwargs) -> dict[int, list[str]]:
    """id of each array among the user's arguments -> its paths (``model.w1.kernel``)."""
    out: dict[int, list[str]] = {}
    for name, value in _bound(fun, args, kwargs) or []:
        for path, leaf in _with_paths(value, is_leaf=_is_variable)[0]:
            where = name + _keystr(path)
            if _is_variable(leaf):
                inner = _with_paths(leaf)[0]
                for sub, x in inner:
                    out.setdefault(id(x), []).append(
                        where if len(inner) == 1 else where + _keystr(sub)
                    )
            else:
                out.setdefault(id(leaf), []).append(where)
    return out


def _name_by_user(counted, args, kwargs) -> None:
    """Keep, on ``counted``'s record, the user's path of each argument JAX names by a
    library's split (``_owner``), or, called by the user, of each nnx Variable JAX names
    by its ``.value``; names that two arrays would share are left as JAX's."""
    record = counted._record
    if record.get("arg_names") is None and record.get("calls", 0) > 1:
        return  # nothing to rename at its first call
    if counted._fun is None:
        return
    found = _owner(counted)
    if found is None:
        user, user_args, user_kwargs = counted._fun, args, kwargs
    else:
        owner, user_args, user_kwargs = found
        user = getattr(owner, "__wrapped__", None)
        if user is None:
            return
        if record.get("arg_names") is None:
            file, line = _where(user)
            if file is not None:
                record["file"], record["line"] = file, line
    paths = _user_paths(user, user_args, user_kwargs)
    jax_names: list[str] = []
    renamed: dict[str, str] = {}
    taken: dict[int, int] = {}
    for name, value in _bound(counted._fun, args, kwargs) or []:
        for path, leaf in _with_paths(value)[0]:
            if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
                continue
            jax_name = name + _keystr(path)
            jax_names.append(jax_name)
            # An array the user passes twice is each of its paths in turn.
            mine = paths.get(id(leaf), [])
            index = taken.get(id(leaf), 0)
            taken[id(leaf)] = index + 1
            if index < len(mine):
                renamed[jax_name] = mine[index]
    users = set(renamed.values())
    if len(users) != len(renamed) or users & (set(jax_names) - set(renamed)):
        return  # two arguments would share a name: JAX's stay
    renamed = {old: new for old, new in renamed.items() if old != new}
    if not renamed:
        return
    with _lock:
        kept = record.setdefault("arg_names", {})
        for old, new in renamed.items():
            if kept.get(old, new) != new:
                kept[old] = None  # named two ways by two calls: JAX's name stays
            elif len(kept) < _MAX_NAMES:
                kept[old] = new


def _tracing(leaves) -> bool:
    return _Tracer is not None and any(isinstance(x, _Tracer) for x in leaves)


def _install(jax) -> None:
    global _Tracer, _Array, _flatten, _with_paths, _keystr
    _Tracer, _Array, _flatten = jax.core.Tracer, jax.Array, jax.tree_util.tree_flatten
    _with_paths, _keystr = jax.tree_util.tree_flatten_with_path, jax.tree_util.keystr
    real_jit = jax.jit

    @functools.wraps(real_jit)
    def jit(fun=None, /, **options):
        if fun is None:
            return lambda f: jit(f, **options)
        jitted = real_jit(fun, **options)
        file, line = _where(fun)
        record = {
            "name": _name(fun),
            "file": file,
            "line": line,
            "calls": 0,
        }
        with _lock:
            _records.append(record)
        return _Counted(jitted, record, fun)

    jax.jit = jit
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        pass  # another JAX: each function's runs are counted in all only
    else:
        if callable(getattr(mlir, "dump_module_to_file", None)):
            mlir.dump_module_to_file = _dumped(mlir.dump_module_to_file)
    atexit.register(_write, final=True)


def _chain() -> None:
    """Run the ``sitecustomize`` that this one hides, if there is one."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.getcwd())
        if folder == here:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_hidden_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            return


if _DIR is not None:
    try:
        import jax as _jax
    except ImportError:
        pass  # not a JAX environment: the capture finds no compiles and says so
    else:
        _install(_jax)
        if int(os.environ.get("SHARDSCOPE_CAPTURE_HOSTS", "1")) > 1:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import _shardscope_hosts

            _shardscope_hosts.install(_jax, state, _write)
    # The torch_xla hook waits for the script to import torch_xla; it imports nothing now.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _shardscope_torch

    _shardscope_torch.install()
if not _LAUNCHER:
    _chain()
