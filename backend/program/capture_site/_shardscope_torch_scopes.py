"""Op scopes for the torch_xla capture, from hooks that leave the traced graph as it is.

torch_xla names each op it traces after the IR scopes open when it is traced
(``torch_xla._XLAC.profiler.scope_pusher``, what ``xp.Trace`` opens): ``layers/0.3/attn.4/
aten__mm``, each scope with a counter. This module opens one:

- around each ``nn.Module`` call, from global forward hooks: the module's path below the
  module that called it (``layers/0``, then ``attn``), so that a scope the script opened
  itself (``xp.Trace``) stays the outer one;
- around each backward op of a module's forward, from hooks on the autograd nodes that
  forward made: ``backward/layers/0/attn``; the backward of what no module made is
  ``backward``;
- around an optimizer's step: ``optimizer``.

A backward op runs in the autograd engine's thread, where no frame of the script's own is
on the stack: the forward hook notes the script's line of each module's first call
(``lines``), where the backward ops of ``backward/<path>`` read as written.

No ``TorchDispatchMode`` or ``TorchFunctionMode`` is entered: either one changes what
torch_xla traces (views come back as gathers with index parameters of their own), so a
capture under one records a program the script does not run.
"""

from __future__ import annotations

import threading

from _shardscope_torch_names import without_wrappers

_SCOPE = "shardscope_scope"

_names: dict[int, str] = {}
_local = threading.local()
# module path -> {"file", "line"} of the script's first call of it
_lines: dict[str, dict] = {}
_lines_lock = threading.Lock()


def lines() -> dict[str, dict]:
    """Each called module's path (``layers.0.attn``) and the script's line of its first
    call, as ``{"file": ..., "line": ...}``; a module called only from library code (a
    checkpoint recomputing it) has none."""
    with _lines_lock:
        return dict(_lines)


def _note_line(path: str, where) -> None:
    """Note the script's line of ``path``'s call, where ``where()`` finds one."""
    if not path or path in _lines:
        return
    line = where()
    if line:
        with _lines_lock:
            _lines.setdefault(path, line)


def _stack() -> list:
    """This thread's open scopes: (module path, the pusher that keeps the scope open)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _path(module) -> str:
    """``layers.0.attn`` for the module the outermost module called holds there, without
    wrappers' segments (``_orig_module``); the outermost module is ``""``."""
    known = _names.get(id(module))
    if known is None:
        for path, sub in module.named_modules():
            _names.setdefault(id(sub), without_wrappers(path))
        known = _names[id(module)]
    return known


def _relative(path: str, parent: str | None) -> str:
    """``path`` below ``parent``; ``""`` where they are one (a wrapper and the module it
    wraps)."""
    if path == parent:
        return ""
    if parent and path.startswith(parent + "."):
        return path[len(parent) + 1 :]
    return path


def install(torch, xlac, where=dict) -> None:
    """Open the scopes above for the rest of the run; ``where()`` is the script's own
    innermost frame as ``{"file": ..., "line": ...}`` (empty where there is none)."""
    push = xlac.profiler.scope_pusher
    seq = _SequenceNumbers(torch)

    def pre(module, args):
        stack = _stack()
        path = _path(module)
        _note_line(path, where)
        parent = stack[-1][0] if stack else None
        below = _relative(path, parent).replace(".", "/")
        if stack and stack[-1][2] == _IN_BACKWARD:
            # a checkpointed module's forward, run again for its backward
            below = "recompute/" + below if below else "recompute"
        stack.append((path, push(below) if below else None, seq.next()))

    def post(module, args, output):
        stack = _stack()
        if not stack:
            return
        path, scope, start = stack.pop()
        del scope  # closes it
        if path and torch.is_grad_enabled():
            _tag(torch, output, path, start)

    torch.nn.modules.module.register_module_forward_pre_hook(pre)
    torch.nn.modules.module.register_module_forward_hook(post, always_call=True)

    from torch.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    def step_pre(optimizer, args, kwargs):
        _stack().append(("", push("optimizer"), 0))

    def step_post(optimizer, args, kwargs):
        stack = _stack()
        if stack:
            stack.pop()

    register_optimizer_step_pre_hook(step_pre)
    register_optimizer_step_post_hook(step_post)
    _wrap_backward(torch, push)


class _SequenceNumbers:
    """The sequence number the next autograd node made on this thread gets: each node
    made after it (in a module's forward) has a larger one."""

    def __init__(self, torch):
        self._torch = torch

    def next(self) -> int:
        torch = self._torch
        with torch.enable_grad():
            probe = torch.empty(0, requires_grad=True).view(0)
        return int(probe.grad_fn._sequence_nr()) + 1


def _tag(torch, output, path: str, start: int) -> None:
    """Give the autograd nodes ``output``'s forward made since ``start`` (and no inner
    module claimed) the scope ``backward/path`` while they run."""
    todo = [t.grad_fn for t in _tensors(torch, output) if t.grad_fn is not None]
    # The Python objects of autograd nodes are made as they are asked for: the walk keeps
    # each one alive, so that no other node's object can take its id.
    seen: dict[int, object] = {}
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        number = node._sequence_nr()
        if number < start or number >= 2**63:  # older, or a leaf's AccumulateGrad
            continue
        if _SCOPE not in node.metadata:
            node.metadata[_SCOPE] = path
            node.register_prehook(_opener(path))
            node.register_hook(_closer)
        todo.extend(n for n, _ in node.next_functions)


def _tensors(torch, value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(torch, v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(torch, v)]
    return [t for t in (getattr(value, k, None) for k in _fields(value)) if t is not None]


def _fields(value) -> list[str]:
    """The tensor fields of a model output dataclass (``logits``, ``loss``)."""
    fields = getattr(value, "__dataclass_fields__", None)
    return list(fields) if isinstance(fields, dict) else []


_pusher = None
# The third field of a backward node's entry on the stack (a forward's is the sequence
# number its nodes start at).
_IN_BACKWARD = -1


def _opener(path: str):
    below = path.replace(".", "/")

    def open_scope(grad_outputs):
        stack = _stack()
        # A backward run inside another's (a checkpoint's) is within ``backward`` already.
        inside = any(entry[2] == _IN_BACKWARD for entry in stack)
        scope = below if inside else ("backward/" + below if below else "backward")
        stack.append((path, _pusher(scope) if scope else None, _IN_BACKWARD))

    return open_scope


def _closer(grad_inputs, grad_outputs):
    stack = _stack()
    if stack:
        stack.pop()


def _wrap_backward(torch, push) -> None:
    """Give the nodes no module's forward made (a loss computed in the script) the scope
    ``backward`` when ``torch.autograd.backward`` (what ``loss.backward()`` calls) runs
    them."""
    global _pusher
    _pusher = push
    real = torch.autograd.backward

    def backward(tensors, *args, **kwargs):
        try:
            _tag(torch, tensors, "", 0)
        except Exception:
            pass  # scopes are a nicety: the backward itself must run
        return real(tensors, *args, **kwargs)

    torch.autograd.backward = backward
