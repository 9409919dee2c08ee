"""MLIR contexts with the dialects and passes shardscope reads and runs."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # jaxlib is imported by the warm-up thread, not by importing this module
    from jaxlib.mlir import ir

_warm_up: threading.Thread | None = None
_warm_up_lock = threading.Lock()


def warm_up() -> threading.Thread:
    """Start making the process's first context in a thread, and return that thread.

    The first context of a process registers every dialect and pass (about 0.3 s); a
    command that waits for a worker to lower its program does that meanwhile. Later
    ``new_context`` calls wait for it rather than register concurrently.
    """
    global _warm_up
    with _warm_up_lock:
        if _warm_up is None:
            _warm_up = threading.Thread(target=_make_context, name="mlir-warm-up", daemon=True)
            _warm_up.start()
        return _warm_up


def new_context() -> ir.Context:
    """A fresh MLIR context with StableHLO, CHLO, Shardy and func dialects registered.

    JAX's own factory registers exactly the dialects (and Shardy's passes) that a lowered
    module uses; modules from different contexts must not be mixed.
    """
    thread = _warm_up
    if thread is not None and thread is not threading.current_thread():
        thread.join()
    return _make_context()


def _make_context() -> ir.Context:
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def parse_module(text: str, context: ir.Context | None = None) -> ir.Module:
    """Parse StableHLO text into a module; raises ``ir.MLIRError`` on malformed text."""
    from jaxlib.mlir import ir

    context = context or new_context()
    with context:
        return ir.Module.parse(text)
