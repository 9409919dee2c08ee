"""MLIR contexts with the dialects and passes shardscope reads and runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # jaxlib is imported on first use, not by importing this module
    from jaxlib.mlir import ir


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
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def parse_module(text: str, context: ir.Context | None = None) -> ir.Module:
    """Parse StableHLO text into a module; raises ``ir.MLIRError`` on malformed text."""
    from jaxlib.mlir import ir

    context = context or new_context()
    with context:
        return ir.Module.parse(text)
