"""``MoveFinder``: which tensor of an op a collective moves, on real propagated programs."""

from __future__ import annotations

import functools

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.run.moved_tensor import MoveFinder, without
from tests.support.compile_oracle import loaded
from tests.support.inputs import PROGRAMS


@functools.cache
def _propagated(file: str):
    return analyse(loaded(str(PROGRAMS / file))).propagation


def _dims(result):
    return lambda v: tuple(tuple(d) for d in result.values[v].spec)


def _op(result, name: str, line_text: str, file: str):
    lines = (PROGRAMS / file).read_text().splitlines()
    return next(
        o
        for o in result.graph.ops
        if o.name == name and o.source_line and line_text in lines[o.source_line - 1]
    )


def test_without_drops_axes_from_one_dimension_or_all():
    dims = (("data",), ("data", "model"))
    assert without(dims, {"data"}, 1) == (("data",), ("model",))
    assert without(dims, {"data"}) == ((), ("model",))


def test_a_permute_for_a_slice_of_a_sharded_dimension_is_a_shift_along_it():
    file = "explain_halo_slice.py"
    result = _propagated(file)
    finder = MoveFinder(result.graph, result.conflicts)
    op = _op(result, "stablehlo.slice", "tokens[:, 1:]", file)
    found = finder.derive("collective-permute", op, {"seq"}, [], _dims(result))
    assert found is not None and found.how == "shift" and found.dim == 1
    assert found.had == found.needed and "seq" in found.had[1]
    # Over an axis no tensor of the op holds, nothing moves.
    assert finder.derive("collective-permute", op, {"nope"}, [], _dims(result)) is None


def test_an_all_reduce_for_a_reduction_sums_partial_results_and_a_gather_selects():
    file = "explain_embedding.py"
    result = _propagated(file)
    finder = MoveFinder(result.graph, result.conflicts)
    # The lookup sits in jnp.take's own function, which names no line of the program.
    lookup = next(o for o in result.graph.ops if o.name == "stablehlo.gather")
    found = finder.derive("all-reduce", lookup, {"model"}, [], _dims(result))
    assert found is not None and found.how == "select" and found.dim == 0
    total = _op(result, "stablehlo.reduce", "jnp.sum", file)
    found = finder.derive("all-reduce", total, {"data"}, [], _dims(result))
    assert found is not None and found.how == "reduce" and found.needed[0] == ()
