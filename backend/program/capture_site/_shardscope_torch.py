"""The torch_xla half of ``shardscope capture``, loaded by this folder's ``sitecustomize``
into the user's own Python: nothing here runs, and torch is not imported, until the script
imports ``torch_xla``.

When it does, the import is let through with XLA told to dump every compiled graph
(``XLA_HLO_DEBUG=1`` for the call stack of each op, ``--xla_dump_to`` with the module as a
proto and as text, before and after XLA's optimizations), and then:

- ``torch_xla._XLAC._xla_step_marker`` (what ``torch_xla.sync`` and ``xm.mark_step`` call)
  is wrapped: before each sync the graph's device-data inputs are asked of torch_xla
  (``_get_tensors_xla_device_data_node`` over the tensors the sync computes, which lists
  them in the order of the compiled module's parameters) and named by the script's own
  variables, modules and optimizers; the dumps that appear during the sync are its graph's.
  After ``--steps`` syncs the script is stopped.
- ``torch_xla._XLAC._xla_mark_sharding`` is wrapped to record each ``xs.mark_sharding``:
  the tensor as the call writes it, the mesh and the partition spec, the line.
- ``xs.Mesh`` is wrapped to record each mesh's shape, axis names, device ids and line.
- A dispatch mode gives each op the scope of the ``nn.Module`` call that ran it
  (``block/qkv``), ``backward/...`` for the ops of ``loss.backward()`` and ``optimizer``
  for an optimizer's step, as the op name's prefix (``_set_xla_custom_op_name_prefix``).

What it learns goes to ``torch.json`` in ``SHARDSCOPE_CAPTURE_DIR``, rewritten after every
sync. It imports nothing of shardscope: the script may run in another environment.
"""

from __future__ import annotations

import ast
import atexit
import gc
import importlib.abc
import importlib.machinery
import json
import linecache
import os
import sys
import threading
import warnings

import _shardscope_torch_names
import _shardscope_torch_origins
import _shardscope_torch_scopes

_DIR = os.environ.get("SHARDSCOPE_CAPTURE_DIR")
_LIMIT = os.environ.get("SHARDSCOPE_CAPTURE_STEPS")
DUMP = "torch_dump"
_HERE = os.path.dirname(os.path.abspath(__file__))
_LIBRARIES = ("torch", "torch_xla", "numpy")

_lock = threading.Lock()
_state: dict = {"syncs": [], "meshes": [], "marks": [], "errors": []}
# torch_xla tensor id -> the script's name for it; kept across syncs, since an in-place
# update gives a tensor a new id while the graph still reads the old one's data.
_names: dict[int, str] = {}
# torch_xla tensor id -> the tensor as an ``xs.mark_sharding`` call wrote it, for a tensor
# the script has no other name for.
_written: dict[int, str] = {}
# torch_xla tensor id -> how and where the script sharded that tensor
# (``_shardscope_torch_origins.via`` and the script's line).
_origin_by_id: dict[int, dict] = {}
_XLAC = None


_counter = [0]


def _next() -> int:
    """The order of the events recorded (syncs, marks, meshes)."""
    with _lock:
        _counter[0] += 1
        return _counter[0]


def _dump_dir() -> str:
    return os.path.join(_DIR or "", DUMP)


def _environment() -> None:
    """Set before torch_xla starts its runtime: fake CPU devices, op call stacks, dumps."""
    os.environ["PJRT_DEVICE"] = "CPU"
    count = os.environ.get("SHARDSCOPE_CAPTURE_DEVICES")
    if count:
        os.environ["CPU_NUM_DEVICES"] = count
    os.environ["XLA_HLO_DEBUG"] = "1"
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = (
        f"{flags} --xla_dump_to={_dump_dir()} --xla_dump_hlo_as_proto --xla_dump_hlo_as_text"
    ).strip()


def _write() -> None:
    if _DIR is None:
        return
    with _lock:
        data = json.dumps({**_state, "scope_lines": _shardscope_torch_scopes.lines()})
    path = os.path.join(_DIR, "torch.json")
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # capture's folder is gone: capture itself has ended


def _user_frame(frame):
    """The innermost frame outside torch, torch_xla, numpy and this folder."""
    while frame is not None:
        file = frame.f_code.co_filename
        if not _is_library(file):
            return frame
        frame = frame.f_back
    return None


def _is_library(file: str) -> bool:
    """Whether ``file`` is this folder's, Python's own, torch's, torch_xla's, numpy's or
    another installed package's (a frame the user did not write)."""
    if file.startswith("<"):
        return True
    path = os.path.abspath(file)
    if os.path.dirname(path) == _HERE or path.startswith(_STDLIB):
        return True
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    return any(path.startswith(folder + os.sep) for folder in _library_folders())


_folders: list[str] = []
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _library_folders() -> list[str]:
    """The folders of the libraries imported so far, found once each."""
    if len(_folders) < len(_LIBRARIES):
        _folders.clear()
        for name in _LIBRARIES:
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__file__", None):
                _folders.append(os.path.dirname(os.path.abspath(module.__file__)))
    return _folders


def _where(frame) -> dict:
    return {"file": frame.f_code.co_filename, "line": frame.f_lineno} if frame else {}


def _call_argument(frame, function: str) -> str | None:
    """The first argument of the call of ``function`` on ``frame``'s line, as written."""
    source = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            callee = node.func
            name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if name == function:
                return ast.unparse(node.args[0])
    return None


def _tensor_id(t) -> int | None:
    try:
        return int(_XLAC._xla_get_tensor_id(t))
    except Exception:
        return None


def _is_xla(t) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and t.device.type == "xla"


def _scopes(frame) -> list[dict]:
    """``__main__``'s globals, then the local variables of the user's frames from the
    outermost in to ``frame``."""
    out = []
    while frame is not None:
        if not _is_library(frame.f_code.co_filename):
            out.append(frame.f_locals)
        frame = frame.f_back
    main = sys.modules.get("__main__")
    if main is not None:
        out.append(vars(main))
    return out[::-1]


def _learn_names(frame) -> None:
    """Name the script's tensors by their current torch_xla ids. A tensor the script
    names now keeps that name; an id no longer reachable (an in-place update gave the
    tensor a new one) keeps the name it had."""
    import torch

    fresh: dict[int, str] = {}
    for name, t in _shardscope_torch_names.named_tensors(torch, _scopes(frame), _is_xla):
        tid = _tensor_id(t)
        if tid is not None:
            fresh.setdefault(tid, name)
            origin = _shardscope_torch_origins.origin_of(t)
            if origin is not None:
                _origin_by_id[tid] = origin
    _names.update(fresh)


def _pending(t) -> bool:
    """Whether ``t`` has an IR node that is not device data (a sync computes it)."""
    try:
        info = _XLAC._get_xla_tensor_debug_info(t)
    except Exception:
        return False
    ir = info.split("\nIR: ", 1)[1].split("\n", 1)[0] if "\nIR: " in info else "None"
    return ir != "None" and "xla::device_data" not in ir


def _sync_inputs() -> list[dict]:
    """The device-data inputs of the graph the next sync compiles, in parameter order:
    each one's tensor id, name (None where the script has none for it) and shape."""
    import torch

    with warnings.catch_warnings():
        # Touching every object wakes deprecated module attributes' warnings.
        warnings.simplefilter("ignore")
        roots = [
            o
            for o in gc.get_objects()
            if isinstance(o, torch.Tensor) and _is_xla(o) and _pending(o)
        ]
    roots.sort(key=lambda t: _tensor_id(t) or 0)
    if not roots:
        return []
    ids, data = _XLAC._get_tensors_xla_device_data_node(roots)
    out = []
    for i, d in zip(ids, data, strict=False):
        entry = {
            "id": int(i),
            "name": _names.get(int(i)) or _written.get(int(i)),
            "shape": list(d.shape),
        }
        if entry["name"] is None and not entry["shape"]:
            entry["value"] = _scalar(d)
        origin = _origin_by_id.get(int(i))
        if origin is not None:
            entry["sharded_by"] = origin
        out.append(entry)
    return out


def _active_modes() -> list[str]:
    """The dispatch and function modes active now (the script's own, or another tool's):
    torch_xla traces a graph under one differently (views as gathers with index
    parameters), so the graph is the one the script runs under that mode only."""
    try:
        from torch.overrides import _get_current_function_mode_stack
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        stack = [*_get_current_dispatch_mode_stack(), *_get_current_function_mode_stack()]
    except Exception:
        return []
    return [type(mode).__name__ for mode in stack]


def _scalar(t):
    """The value of a scalar the graph reads that no variable holds (a learning rate, a
    constant torch_xla moved to the device), or None."""
    try:
        value = t.cpu().item()
    except Exception:
        return None
    return value if isinstance(value, (int, float, bool)) else None


def _dumps() -> set[str]:
    try:
        return {n for n in os.listdir(_dump_dir()) if n.endswith(".before_optimizations.hlo.pb")}
    except OSError:
        return set()


def _wrap_step_marker(real):
    def step_marker(*args, **kwargs):
        count = len(_state["syncs"])
        if _LIMIT is not None and count >= int(_LIMIT):
            _stop()
        frame = _user_frame(sys._getframe(1))
        record: dict = {"index": count, "seq": _next(), **_where(frame)}
        try:
            record["graph"] = str(_XLAC._get_current_graph_name())
        except Exception:
            pass
        modes = _active_modes()
        if modes:
            record["modes"] = modes
        try:
            _learn_names(frame)
            record["inputs"] = _sync_inputs()
        except Exception as exc:  # the sync itself must still run
            record["error"] = f"{type(exc).__name__}: {exc}"
        before = _dumps()
        try:
            return real(*args, **kwargs)
        finally:
            record["dumps"] = sorted(_dumps() - before)
            with _lock:
                _state["syncs"].append(record)
            try:
                _learn_names(frame)
            except Exception:
                pass
            _write()

    return step_marker


def _wrap_mark_sharding(real):
    def mark_sharding(t, *args, **kwargs):
        try:
            _record_mark(t, sys._getframe(1))
        except Exception as exc:
            _state["errors"].append(f"mark_sharding: {type(exc).__name__}: {exc}")
        return real(t, *args, **kwargs)

    return mark_sharding


def _record_mark(t, frame) -> None:
    """Record an ``xs.mark_sharding`` call: its frame holds ``mesh`` and
    ``partition_spec``; the user's line writes the tensor."""
    local = frame.f_locals
    mesh, spec = local.get("mesh"), local.get("partition_spec")
    user = _user_frame(frame)
    written = _call_argument(user, "mark_sharding") if user is not None else None
    tid = _tensor_id(getattr(t, "global_tensor", t))
    if written and tid is not None:
        _written.setdefault(tid, written)
    if user is not None:
        _learn_names(user)
    via = _shardscope_torch_origins.via(frame, user)
    if tid is not None:
        origin = _origin_by_id[tid] = {"via": via, **_where(user)}
        _shardscope_torch_origins.remember(getattr(t, "global_tensor", t), origin)
    entry = {
        "seq": _next(),
        "tensor": written,
        "id": tid,
        "via": via,
        "shape": list(getattr(t, "shape", ())),
        "spec": _spec_json(spec),
        "mesh": _mesh_json(mesh),
        **_where(user),
    }
    with _lock:
        _state["marks"].append(entry)


def _spec_json(spec):
    if spec is None:
        return None
    out = []
    for d in spec:
        if isinstance(d, tuple):
            out.append([x if isinstance(x, (str, int)) else str(x) for x in d])
        elif d is None or isinstance(d, (str, int)):
            out.append(d)
        else:
            out.append(str(d))
    return out


def _mesh_json(mesh) -> dict | None:
    if mesh is None:
        return None
    try:
        names = list(mesh.axis_names) if mesh.axis_names is not None else None
        return {
            "shape": [int(n) for n in mesh.mesh_shape],
            "axis_names": names,
            "device_ids": [int(d) for d in list(mesh.device_ids)],
        }
    except Exception:
        return None


def _wrap_mesh(cls) -> None:
    real_init = cls.__init__

    def __init__(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        entry = _mesh_json(self)
        if entry is not None:
            entry.update(seq=_next(), **_where(_user_frame(sys._getframe(1))))
            with _lock:
                _state["meshes"].append(entry)

    cls.__init__ = __init__


def _stop() -> None:
    """End the script at once (the step limit): records first, then a clean exit code."""
    _write()
    sys.stdout.flush()
    sys.stderr.flush()
    with open(os.path.join(_DIR, "stopped"), "w") as f:
        f.write("syncs")
    os._exit(0)


# --- installing ------------------------------------------------------------------------


def _installed(name: str, module) -> None:
    global _XLAC
    if name == "torch_xla":
        _XLAC = module._XLAC
        _XLAC._xla_step_marker = _wrap_step_marker(_XLAC._xla_step_marker)
        _XLAC._xla_mark_sharding = _wrap_mark_sharding(_XLAC._xla_mark_sharding)
        import torch

        try:
            _shardscope_torch_scopes.install(
                torch, _XLAC, lambda: _where(_user_frame(sys._getframe()))
            )
        except Exception as exc:
            _state["errors"].append(f"scopes: {type(exc).__name__}: {exc}")
        atexit.register(_write)
        _write()
    elif name == "torch_xla.distributed.spmd.xla_sharding":
        _wrap_mesh(module.Mesh)


class _Finder(importlib.abc.MetaPathFinder):
    """Lets the import of torch_xla (and its sharding module) through, then wraps them."""

    WATCHED = ("torch_xla", "torch_xla.distributed.spmd.xla_sharding")

    def find_spec(self, name, path=None, target=None):
        if name not in self.WATCHED:
            return None
        if name == "torch_xla":
            _environment()
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            try:
                _installed(name, module)
            except Exception as exc:
                _state["errors"].append(f"{name}: {type(exc).__name__}: {exc}")

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Watch for torch_xla's import (nothing happens unless the script imports it)."""
    if _DIR is not None and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
