"""shardscope: see how JAX shards your program, step by step.

``shardscope.inspect(fn, *args, mesh=..., in_shardings=...)`` propagates shardings through
``fn`` as the compiler does and returns the result (``.to_json()``, ``.show()``, and a
graph in notebooks). Importing ``shardscope`` is cheap: jax loads on the first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardscope.app.api.inspection import Inspection

__all__ = ["inspect"]


def inspect(
    fn: Any,
    *args: Any,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    **kwargs: Any,
) -> Inspection:
    """Propagate shardings through ``fn(*args, **kwargs)`` (see
    ``shardscope.app.api.inspection.inspect``)."""
    from shardscope.app.api.inspection import inspect as run

    return run(
        fn, *args, mesh=mesh, in_shardings=in_shardings, out_shardings=out_shardings, **kwargs
    )
