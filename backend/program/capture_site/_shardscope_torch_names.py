"""The script's own names for the tensors a torch_xla graph reads, for the capture hook.

A tensor is named by the path the script would write to reach it from one of its
variables: ``model.layers.0.attn.qkv.weight`` (a module's parameter, buffer or gradient),
``optimizer.state[model.up.weight]['exp_avg']`` (an optimizer's state, indexed by its
parameter as the script would index it), ``self.model.embed.weight`` (a module held by an object of the
script's, such as a trainer's ``self``), ``batch['x']`` (one level into lists, tuples and
dicts). Wrappers' own segments (``_orig_module`` of FSDP, ``_orig_mod`` of
``torch.compile``, ``_fsdp_wrapped_module``, ``_checkpoint_wrapped_module``) are left out:
the path is the one the script's model has.

The roots are ``__main__``'s globals, then the script's frames from the outermost in, so
that a model the script holds as ``llama`` keeps that name inside a helper that calls it
``model``; a plain tensor variable is named by the innermost frame that has it.
"""

from __future__ import annotations

import sys

WRAPPERS = frozenset(
    {"_orig_module", "_orig_mod", "_fsdp_wrapped_module", "_checkpoint_wrapped_module"}
)
_MAX_ITEMS = 64


def without_wrappers(path: str) -> str:
    """``layers.0.q_proj.weight`` for ``_orig_module.layers.0._orig_module.q_proj.weight``."""
    return ".".join(part for part in path.split(".") if part not in WRAPPERS)


def named_tensors(torch, frames: list[dict], is_xla) -> list[tuple[str, object]]:
    """(name, tensor) for every XLA tensor the script can name from ``frames`` (the
    roots, outermost first): modules' parameters, buffers and gradients first, then
    optimizers' state, then plain variables (innermost frame first)."""
    modules, optimizers, plain = _roots(torch, frames, is_xla)
    out: list[tuple[str, object]] = []
    param_names: dict[int, str] = {}
    for var, module in modules:
        for name, p in module.named_parameters(remove_duplicate=False):
            full = f"{var}.{without_wrappers(name)}"
            param_names.setdefault(id(p), full)
            out.append((full, p))
            if p.grad is not None:
                out.append((f"{full}.grad", p.grad))
        for name, b in module.named_buffers(remove_duplicate=False):
            out.append((f"{var}.{without_wrappers(name)}", b))
    for var, opt in optimizers:
        for group_index, group in enumerate(opt.param_groups):
            for i, p in enumerate(group["params"]):
                key = param_names.get(id(p), f"{var}.param_groups[{group_index}]['params'][{i}]")
                for k, v in opt.state.get(p, {}).items():
                    out.append((f"{var}.state[{key}][{k!r}]", v))
    return [(n, t) for n, t in out + plain if is_xla(t)]


def _roots(torch, frames: list[dict], is_xla):
    """The modules, optimizers and plain tensors the script names, each once, by the
    first root that has it."""
    modules, optimizers, plain = [], [], []
    seen: set[int] = set()

    def visit(var: str, value, inner: list) -> None:
        if id(value) in seen:
            return
        if isinstance(value, torch.nn.Module):
            seen.add(id(value))
            modules.append((var, value))
        elif isinstance(value, torch.optim.Optimizer):
            seen.add(id(value))
            optimizers.append((var, value))
        elif is_xla(value):
            inner.append((var, value))
        elif isinstance(value, (list, tuple)) and len(value) <= _MAX_ITEMS:
            inner.extend((f"{var}[{i}]", v) for i, v in enumerate(value) if is_xla(v))
        elif isinstance(value, dict) and len(value) <= _MAX_ITEMS:
            inner.extend((f"{var}[{k!r}]", v) for k, v in value.items() if is_xla(v))

    for scope in frames:
        inner: list = []
        for var, value in list(scope.items()):
            if var.startswith("__"):
                continue
            visit(var, value, inner)
            if not isinstance(value, (torch.nn.Module, torch.optim.Optimizer, torch.Tensor)):
                for attr, held in _held(value):
                    visit(f"{var}.{attr}", held, inner)
        plain[:0] = inner  # inner frames' variables first
    unique, taken = [], set()
    for var, t in plain:
        if id(t) not in taken:
            taken.add(id(t))
            unique.append((var, t))
    return modules, optimizers, unique


def _scripts_class(kind) -> bool:
    """Whether ``kind`` is a class of the script's (or of another file of the user's), not
    of Python's own modules or of an installed package."""
    module = getattr(kind, "__module__", "") or ""
    if module.split(".")[0] in sys.stdlib_module_names:
        return False
    file = getattr(sys.modules.get(module), "__file__", None) or ""
    parts = file.replace("\\", "/").split("/")
    return "site-packages" not in parts and "dist-packages" not in parts


def _held(value) -> list[tuple[str, object]]:
    """The attributes of an object of the script's own class (a trainer): what it holds
    as ``self.model``, ``self.optimizer``, ``self.batch``."""
    if not _scripts_class(type(value)):
        return []
    try:
        attributes = vars(value)
    except TypeError:
        return []
    if len(attributes) > _MAX_ITEMS * 4:
        return []
    return [(k, v) for k, v in attributes.items() if not k.startswith("__")]
