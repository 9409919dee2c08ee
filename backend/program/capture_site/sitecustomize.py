"""Loaded into the user's own Python by ``shardscope capture`` (this folder is put first on
``PYTHONPATH``), before their script runs: it counts the calls of every function the script
wraps in ``jax.jit``, and stops the script after a number of steps if asked.

JAX itself writes the module of every compile (``JAX_DUMP_IR_TO``); what this adds is which
of those are the script's own functions, where they are defined, and how often they ran. It
imports nothing of shardscope (the script may run in another environment) and does nothing
unless ``SHARDSCOPE_CAPTURE_DIR`` is set. At exit, or when the step limit stops the script,
it writes ``functions.json`` there: one record per jitted function.

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
import types

_DIR = os.environ.get("SHARDSCOPE_CAPTURE_DIR")
_LIMIT = os.environ.get("SHARDSCOPE_CAPTURE_STEPS")

_records: list[dict] = []
_lock = threading.Lock()
_written = False


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


def _write() -> None:
    global _written
    with _lock:
        if _written or _DIR is None:
            return
        _written = True
        records = [dict(r) for r in _records]
    path = os.path.join(_DIR, "functions.json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"functions": records}, f)
    os.replace(path + ".tmp", path)


def _stop() -> None:
    """End the script at once (the step limit): records first, then a clean exit code."""
    _write()
    sys.stdout.flush()
    sys.stderr.flush()
    with open(os.path.join(_DIR, "stopped"), "w") as f:
        f.write("steps")
    os._exit(0)


class _Counted:
    """A ``jax.jit`` object that counts its calls; everything else goes to the real one."""

    __slots__ = ("_jitted", "_record", "__weakref__")

    def __init__(self, jitted, record: dict) -> None:
        self._jitted = jitted
        self._record = record

    def __call__(self, *args, **kwargs):
        record = self._record
        if not _tracing(args, kwargs):  # a call traced into another function is not a run
            if _LIMIT is not None and record["calls"] >= int(_LIMIT):
                _stop()
            record["calls"] += 1
        return self._jitted(*args, **kwargs)

    def __get__(self, obj, owner=None):
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __repr__(self) -> str:
        return repr(self._jitted)


_Tracer: type | None = None
_leaves = None


def _tracing(args, kwargs) -> bool:
    return _Tracer is not None and any(isinstance(x, _Tracer) for x in _leaves((args, kwargs)))


def _install(jax) -> None:
    global _Tracer, _leaves
    _Tracer, _leaves = jax.core.Tracer, jax.tree_util.tree_leaves
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
        return _Counted(jitted, record)

    jax.jit = jit
    atexit.register(_write)


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
_chain()
