"""Collectives read from compiled HLO, checked against the compiled text and the mesh.

Programs are compiled here with jax on 8 of the test process's CPU devices; the expected
groups come from the jax mesh itself (which devices share a coordinate on the other axes).
"""

import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from shardscope.backend.hlo.hlo_collectives import KINDS, read_collectives

pytestmark = pytest.mark.slow


def _mesh(order=None):
    devices = np.array(jax.devices()[:8])
    if order is not None:
        devices = devices[order]
    return Mesh(devices.reshape(4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def _groups_along(mesh, axis):
    ids = np.vectorize(lambda d: d.id)(mesh.devices)
    grid = ids if axis == "data" else ids.T
    # one group per position of the other axis: a column over data, a row over model
    return {frozenset(int(i) for i in grid[:, j]) for j in range(grid.shape[1])}


def _compile(fn, mesh, shardings, shapes):
    structs = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    with jax.set_mesh(mesh):
        compiled = jax.jit(fn, in_shardings=shardings).lower(*structs).compile()
    assignment = [d.id for d in compiled.runtime_executable().local_devices()]
    return compiled.as_text(), assignment


def _text_counts(text):
    """Collectives per kind, counted straight from the instruction lines."""
    counts = {}
    for kind in KINDS:
        n = len(re.findall(rf"= [^=]*? {kind}(?:-start)?\(", text))
        if n:
            counts[kind] = n
    return counts


def _kinds(found):
    counts = {}
    for c in found:
        counts[c["kind"]] = counts.get(c["kind"], 0) + 1
    return counts


@pytest.fixture(scope="module")
def shard_map_program():
    mesh = _mesh()

    def program(x, y):
        @partial(
            jax.shard_map,
            in_specs=(P("data", "model"), P("data", None)),
            out_specs=(P("data", "model"), P("data", None), P(None, "model"), P("data", None)),
            check_vma=False,
        )
        def local(a, b):
            s = jax.lax.psum(a, "model")
            p = jax.lax.ppermute(b, "data", perm=[(0, 1), (1, 2), (2, 3), (3, 0)])
            g = jax.lax.all_gather(a, "data", axis=0, tiled=True)
            t = jax.lax.all_to_all(b, "data", 0, 1, tiled=True)
            return s, p, g, t

        return local(x, y)

    text, assignment = _compile(program, mesh, None, [(16, 32), (16, 32)])
    return mesh, text, read_collectives(text, assignment, 8)


def test_every_collective_of_the_text_is_read_once(shard_map_program):
    _, text, found = shard_map_program
    assert _kinds(found) == _text_counts(text)
    assert set(_kinds(found)) == {"all-reduce", "collective-permute", "all-gather", "all-to-all"}


def test_groups_are_the_devices_along_the_axis(shard_map_program):
    mesh, _, found = shard_map_program
    by_kind = {c["kind"]: c for c in found}
    assert {frozenset(g) for g in by_kind["all-reduce"]["groups"]} == _groups_along(mesh, "model")
    assert {frozenset(g) for g in by_kind["all-gather"]["groups"]} == _groups_along(mesh, "data")
    assert {frozenset(g) for g in by_kind["all-to-all"]["groups"]} == _groups_along(mesh, "data")


def test_permute_pairs_follow_the_permutation(shard_map_program):
    mesh, _, found = shard_map_program
    permute = next(c for c in found if c["kind"] == "collective-permute")
    ids = np.vectorize(lambda d: d.id)(mesh.devices)
    expected = {(int(ids[i, j]), int(ids[(i + 1) % 4, j])) for i in range(4) for j in range(2)}
    assert {tuple(p) for p in permute["groups"]} == expected


def test_shapes_bytes_and_sources(shard_map_program):
    _, _, found = shard_map_program
    psum = next(c for c in found if c["kind"] == "all-reduce")
    assert psum["shapes"] == [[4, 16]] and psum["dtypes"] == ["f32"]
    assert psum["result_bytes"] == 4 * 16 * 4
    assert psum["op_name"].endswith("shard_map/psum")
    assert psum["file"] == __file__ and psum["line"] is not None
    gather = next(c for c in found if c["kind"] == "all-gather")
    assert gather["dimensions"] == [0] and gather["shapes"] == [[16, 16]]


def test_a_permuted_mesh_gives_device_ids():
    mesh = _mesh([5, 2, 7, 0, 3, 6, 1, 4])

    def conflict(x, y):
        return jnp.sin(x) + y

    shardings = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P("model", None)))
    text, assignment = _compile(conflict, mesh, shardings, [(16, 32), (16, 32)])
    assert assignment == [5, 2, 7, 0, 3, 6, 1, 4]
    found = read_collectives(text, assignment, 8)
    assert _kinds(found) == _text_counts(text) == {"all-gather": 2}
    groups = {frozenset(frozenset(g) for g in c["groups"]) for c in found}
    assert groups == {
        frozenset(_groups_along(mesh, "data")),
        frozenset(_groups_along(mesh, "model")),
    }


def test_a_combined_collective_counts_its_operands():
    mesh = _mesh()

    def two(a, b, c, d):
        return a @ b, c @ d

    lhs, rhs = NamedSharding(mesh, P(None, "data")), NamedSharding(mesh, P("data", None))
    text, assignment = _compile(two, mesh, (lhs, rhs, lhs, rhs), [(16, 32), (32, 8)] * 2)
    found = read_collectives(text, assignment, 8)
    assert _kinds(found) == _text_counts(text) == {"all-reduce": 1}
    assert found[0]["operands"] == 2 and found[0]["shapes"] == [[16, 8], [16, 8]]
    assert found[0]["result_bytes"] == 2 * 16 * 8 * 4


ASYNC = """HloModule m, num_partitions=4

ENTRY %main (p: f32[8,16]) -> (f32[8,16], f32[32,16]) {
  %p = f32[8,16]{1,0} parameter(0)
  %all-reduce-start = f32[8,16]{1,0} all-reduce-start(%p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%add, metadata={op_name="jit(f)/psum"}
  %all-reduce-done = f32[8,16]{1,0} all-reduce-done(%all-reduce-start)
  %all-gather-start = (f32[8,16]{1,0}, f32[32,16]{1,0}) all-gather-start(%p), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %all-gather-done = f32[32,16]{1,0} all-gather-done(%all-gather-start)
  ROOT %t = (f32[8,16]{1,0}, f32[32,16]{1,0}) tuple(%all-reduce-done, %all-gather-done)
}
"""


def test_an_async_pair_is_one_collective_with_the_done_shape():
    found = read_collectives(ASYNC)
    assert [(c["kind"], c["shapes"], c["groups"]) for c in found] == [
        ("all-reduce", [[8, 16]], [[0, 1], [2, 3]]),
        ("all-gather", [[32, 16]], [[0, 1, 2, 3]]),
    ]
    assert found[0]["op_name"] == "jit(f)/psum" and found[0]["line"] is None


def test_a_collective_in_nested_loops_runs_the_product_of_their_trip_counts():
    mesh = _mesh()

    def nested(x, ws):
        def outer(h, group):
            def inner(h, w):
                return jnp.tanh(h @ w), None

            return jax.lax.scan(inner, h, group)[0], None

        h = jax.lax.fori_loop(0, 5, lambda i, h: jnp.sin(h), x)
        return jax.lax.scan(outer, h, ws)[0]

    shardings = (
        NamedSharding(mesh, P(None, "model")),
        NamedSharding(mesh, P(None, None, "model", None)),
    )
    text, assignment = _compile(nested, mesh, shardings, [(8, 16), (2, 3, 16, 16)])
    found = read_collectives(text, assignment, 8)
    assert found and _kinds(found) == _text_counts(text)
    counts = [int(n) for n in re.findall(r'"known_trip_count":\{"n":"(\d+)"\}', text)]
    # The scans' 2 and 3 steps are XLA's own counts; the collectives are in the inner body.
    assert {2, 3} <= set(counts)
    for c in found:
        assert [loop["trip_count"] for loop in c["loops"]] == [2, 3], c["name"]
        assert c["runs_per_call"] == 6
        assert all(loop["op_name"].endswith("while") for loop in c["loops"])
        assert c["inputs"] and all(f"%{name} = " in text for name in c["inputs"])


def test_a_collective_outside_loops_runs_once(shard_map_program):
    _, _, found = shard_map_program
    assert all(c["loops"] == [] and c["runs_per_call"] == 1 for c in found)


def test_a_training_step_is_read_from_part_of_its_lines():
    # The reader passes over the lines that can name no collective, call or tuple element
    # and still reads every collective the compiler wrote.
    from shardscope.backend.hlo.hlo_collectives import _lines_read

    mesh = _mesh()

    def step(w1, w2, x):
        def loss(w1, w2):
            return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2)

        g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.1 * g1, w2 - 0.1 * g2

    shardings = (
        NamedSharding(mesh, P(None, "model")),
        NamedSharding(mesh, P("model", None)),
        NamedSharding(mesh, P("data", None)),
    )
    text, assignment = _compile(step, mesh, shardings, [(16, 32), (32, 16), (8, 16)])
    found = read_collectives(text, assignment, 8)
    assert found and _kinds(found) == _text_counts(text)
    read = _lines_read(text)
    assert len(read) < len(text.splitlines())
    for c in found:
        assert any(line.lstrip().startswith(f"%{c['name']} = ") for line in read), c["name"]
