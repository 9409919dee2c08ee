"""MLIR contexts with the dialects and passes shardscope reads, and running passes on modules.

jaxlib is imported on first use, not by importing this module: commands that never touch
MLIR (building the CLI parser, ``shard``) must not pay for importing jax.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shardscope.backend.errors import ShardscopeError

if TYPE_CHECKING:
    from jaxlib.mlir import ir


# The deepest bracket nesting parsed. MLIR's parser recurses once per level and a module
# nested 50,000 deep overflows the stack (a segfault, measured here); a lowered 24-layer
# transformer nests 7 deep.
MAX_NESTING = 1000
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_OP = re.compile(r"^\s*%[^=\n]*=\s*\"?(?:stablehlo\.|sdy\.|call\b|func\.call\b)", re.MULTILINE)


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``( [ { <`` in ``text``, outside string literals.

    About 0.03 s for a 1 MiB module (a third of parsing it).
    """
    # Lazy: numpy comes with jaxlib, which this module does not import up front.
    import numpy as np

    plain = _STRING.sub('""', text).replace("->", "  ")
    codes = np.frombuffer(plain.encode("utf-8", errors="replace"), dtype=np.uint8)
    step = np.zeros(256, dtype=np.int8)
    step[list(b"([{<")] = 1
    step[list(b")]}>")] = -1
    return int(np.cumsum(step[codes], dtype=np.int64).max(initial=0))


def has_utf8(text: str | None) -> bool:
    """Whether ``text`` (None: no text) has a UTF-8 form, which printing it or handing it to
    MLIR needs: it holds no lone surrogate."""
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_problem(text: str) -> str | None:
    """Why ``text`` is not module text MLIR reads as written (``a lone surrogate \\udcff at
    line 3``), or None.

    A str with a lone surrogate has no UTF-8 form, and the bindings refuse it with a
    TypeError; the parser skips a NUL character between tokens and ends a token at one
    (both measured here), and the MLIR printer never writes one.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        at = exc.start
        what = f"a lone surrogate {ascii(text[at])[1:-1]}"
    else:
        at = text.find("\0")
        if at < 0:
            return None
        what = "a NUL character"
    line = text.count("\n", 0, at) + 1
    return f"{what} at line {line}"


def warm_up() -> None:
    """Import jax's MLIR support and register every dialect and pass now.

    The first context of a process pays for that (about 0.3 s plus importing jax); a
    command that waits for a worker to lower its program pays it meanwhile.
    """
    new_context()


def new_context() -> ir.Context:
    """A fresh MLIR context with StableHLO, CHLO, Shardy and func dialects registered.

    JAX's own factory registers exactly the dialects (and Shardy's passes) that a lowered
    module uses; modules from different contexts must not be mixed.
    """
    # Lazy: importing jax costs seconds (module docstring).
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def parse_module(text: str, context: ir.Context | None = None) -> ir.Module:
    """Parse StableHLO text into a module; raises ``ir.MLIRError`` on malformed text and
    ShardscopeError on text that is not MLIR's to read (``text_problem``)."""
    problem = text_problem(text)
    if problem is not None:
        raise ShardscopeError(
            f"the module text holds {problem}, which MLIR does not read; export the module "
            f"again with jax.jit(f).lower(...).as_text()"
        )
    # Lazy: importing jaxlib's MLIR bindings is not free (module docstring).
    from jaxlib.mlir import ir

    context = context or new_context()
    with context:
        return ir.Module.parse(text)


class ModuleView:
    """A detached copy of a module: what the readers need of ``ir.Module`` (the bindings
    cannot wrap a cloned ``builtin.module`` op back into a Module)."""

    def __init__(self, operation: ir.Operation) -> None:
        self.operation = operation
        self.context = operation.context
        self.body = operation.regions[0].blocks[0]

    def __str__(self) -> str:
        return str(self.operation)


def detached_copy(module: ir.Module | ModuleView) -> ModuleView:
    """A copy of ``module`` that passes can change while ``module`` stays as it is."""
    return ModuleView(module.operation.clone())


def run_passes(module: ir.Module | ModuleView, pipeline: str) -> None:
    """Run a textual pass pipeline on ``module``; a compiler error becomes a ShardscopeError.

    The verifier is off: Shardy's own verifier rejects the debug attributes it writes on
    ``sdy.data_flow_edge`` ops.
    """
    # Lazy like the rest of this module; a caller with a module has jaxlib loaded anyway.
    from jaxlib.mlir import ir, passmanager

    pm = passmanager.PassManager.parse(pipeline, context=module.context)
    pm.enable_verifier(False)
    try:
        pm.run(module.operation)
    except ir.MLIRError as exc:
        first = str(exc).strip().splitlines()
        detail = " ".join(line.strip() for line in first[:3])
        raise ShardscopeError(f"Shardy rejected the annotated program: {detail}") from None


def count_ops(text: str) -> int:
    """About how many ops a module's text holds (lines that start an op), for picking the
    largest function; 0 for a text nested deeper than shardscope parses."""
    if nesting_depth(text) > MAX_NESTING:
        return 0
    return len(_OP.findall(text))


def closing_bracket(text: str, opening: int) -> int | None:
    """The index of the bracket (any of ``([{<``) that closes the one at ``opening`` in
    MLIR text, passing over quoted strings; None where it is not closed."""
    depth, i, quoted = 0, opening, False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None
