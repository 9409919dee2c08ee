"""Compiled shardings: mesh axes for the pieces XLA cut a value into, and on a real
program the square of an RMSNorm as the compiler's own compile computes it."""

from __future__ import annotations

import functools
import re

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.run.compiled_shardings import CompiledShardings, assign_axes, piece_counts
from shardscope.backend.run.op_index import OpIndex
from tests.support.compile_oracle import compiled_text, loaded
from tests.support.inputs import PROGRAMS

MESH = {"data": 2, "tensor": 4}


def test_piece_counts_allow_padding():
    assert piece_counts((8, 64), (4, 16)) == [[2], [4]]
    assert piece_counts((63,), (16,)) == [[4]]
    assert piece_counts((8,), (8,)) == [[1]]


@pytest.mark.parametrize(
    ("shape", "local", "prefer", "hint", "expected"),
    [
        # Propagation's axes kept where they make the count.
        ((8, 64), (4, 16), (("data",), ("tensor",)), (), (("data",), ("tensor",))),
        # A dimension propagation left whole, cut 4 ways: the 4-device axis.
        ((8, 32, 64), (4, 32, 16), (("data",), (), ()), (), (("data",), (), ("tensor",))),
        # Both axes on one dimension.
        ((64,), (8,), ((),), (), (("data", "tensor"),)),
        # Padded pieces: 63 in 4 pieces of 16.
        ((63,), (16,), ((),), (), (("tensor",),)),
        # Only a count of 3 cuts 100 into pieces of 34: no axes make it.
        ((100,), (34,), ((),), (), None),
    ],
)
def test_assign_axes(shape, local, prefer, hint, expected):
    assert assign_axes(shape, local, MESH, prefer, hint) == expected


def test_each_axis_is_used_once():
    # Two dimensions cut in 2: only one 2-device axis; the other takes nothing that fits.
    assert assign_axes((4, 4), (2, 2), MESH) is None
    assert assign_axes((4, 8), (2, 2), MESH) == (("data",), ("tensor",))


@functools.cache
def _norm():
    """The RMSNorm program's propagation, the compiler's own compile of it, and its
    compiled shardings read from that compile."""
    program = loaded(str(PROGRAMS / "explain_rms_norm.py"))
    result = analyse(program).propagation
    text = compiled_text(program)
    graph = result.graph
    shardings = CompiledShardings(text, graph, dict(result.mesh.shape), OpIndex(graph).find)
    return result, text, shardings


def test_the_square_of_a_norm_is_compiled_where_its_operand_lies():
    result, text, shardings = _norm()
    graph = result.graph
    (square,) = [v for v in graph.values if v.display_name.endswith("square %0")]
    compiled = shardings.of_value(square.id, tuple(tuple(d) for d in result.values[square.id].spec))
    assert compiled == (("data",), (), ("tensor",))
    # The compiler's own instruction for it has that per-device shape.
    assert re.search(r"= f32\[4,16,16\]\{[^}]*\} multiply\(", text)
    # An argument has no instruction of its own: propagation's stands.
    x = graph.value_by_name("x")
    assert shardings.of_value(x.id) is None


def test_producer_ops_lead_from_the_norms_all_reduce_to_its_square():
    result, text, shardings = _norm()
    first = re.search(r"%(all-reduce[\w.]*) = f32\[4,16\]", text)[1]
    names = [result.graph.ops[o].name for o in shardings.producer_ops(first)]
    # jnp.square is chlo.square in the lowered program (a multiply in the compiled one).
    assert names[:2] == ["stablehlo.reduce", "chlo.square"]
