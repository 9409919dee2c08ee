"""A run lowers its program on the run's shardings reusing the load's trace where that
gives the module a fresh trace gives, and traces afresh elsewhere."""

import functools
import time

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

from shardscope.backend.program.lower import import_program, lower_namespace
from shardscope.backend.program.trace import constrain_results
from shardscope.backend.run.lowering import lower_on, reusable
from shardscope.backend.run.reference import program_inputs, shape_dtype
from tests.support.inputs import REPO


def loaded(example: str):
    """The example's globals, loaded as a run loads them, its PROGRAM counting traces."""
    ns = import_program(str(REPO / "assets" / "examples" / f"{example}.py"), {})
    program = ns["PROGRAM"]
    traces = []

    @functools.wraps(program)
    def counted(*args, **kwargs):
        traces.append(1)
        return program(*args, **kwargs)

    ns["PROGRAM"] = counted
    lower_namespace(example, ns, time.perf_counter())
    return ns, traces


def run_structs(ns, axis_types=AxisType.Auto):
    """The example's mesh on CPU devices and its flat arguments with their specs' shardings."""
    axes = ns["MESH"]
    jmesh = jax.make_mesh(tuple(axes.values()), tuple(axes), axis_types=(axis_types,) * len(axes))
    inputs = program_inputs(ns, 0)
    flat = jax.tree_util.tree_flatten_with_path(inputs.call.args)[0]
    names = [_name(ns, key) for key, _ in flat]
    specs = ns.get("SPECS") or {}
    structs = []
    for leaf, name in zip(inputs.leaves, names, strict=True):
        shape, dtype = shape_dtype(leaf)
        spec = specs.get(name)
        sharding = NamedSharding(jmesh, spec) if spec is not None else None
        structs.append(jax.ShapeDtypeStruct(shape, dtype, sharding=sharding))
    return jmesh, inputs.call, structs


def _name(ns, key) -> str:
    import inspect

    params = list(inspect.signature(ns["PROGRAM"]).parameters)
    return params[key[0].idx] + jax.tree_util.keystr(key[1:])


def fresh(call, structs, jmesh, wrap=None):
    with jax.set_mesh(jmesh):
        return call.trace(leaves=structs, wrap=wrap).lower()


@pytest.mark.slow
@pytest.mark.parametrize(
    "example", ["transformer", "mlp", "attention", "scan", "conflict", "matmul6"]
)
def test_the_loads_trace_is_reused_and_the_module_is_a_fresh_traces(example):
    ns, traces = loaded(example)
    assert len(traces) == 1
    jmesh, call, structs = run_structs(ns)
    mine = dict(program=ns["PROGRAM"], own_mesh=ns["MESH"])
    assert reusable(call, structs, jmesh, **mine)
    lowered = lower_on(call, structs, jmesh, **mine)
    assert len(traces) == 1  # the load's trace, reused
    expected = fresh(call, structs, jmesh)
    assert len(traces) == 2
    assert lowered.as_text() == expected.as_text()
    with jax.set_mesh(jmesh):
        compiled, again = lowered.compile(), expected.compile()
    assert compiled.input_shardings == again.input_shardings
    assert compiled.output_shardings == again.output_shardings
    leaves = [np.ones(s.shape, s.dtype) for s in structs]
    placed = [
        jax.device_put(x, s)
        for x, s in zip(leaves, jax.tree.leaves(compiled.input_shardings[0]), strict=True)
    ]
    args = jax.tree.unflatten(compiled.in_tree, placed)[0]
    for got, want in zip(
        jax.tree.leaves(compiled(*args)), jax.tree.leaves(again(*args)), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.slow
def test_what_a_fresh_trace_must_give_is_traced_afresh():
    ns, traces = loaded("mlp")
    jmesh, call, structs = run_structs(ns)
    mine = dict(program=ns["PROGRAM"], own_mesh=ns["MESH"])
    # result constraints wrap the function: a fresh trace, the same module as before
    wrap = lambda jitted: constrain_results(jitted, {0: "data, _"}, jmesh)  # noqa: E731
    lowered = lower_on(call, structs, jmesh, wrap=wrap, **mine)
    assert len(traces) == 2
    assert lowered.as_text() == fresh(call, structs, jmesh, wrap).as_text()
    # no sharding to give the devices, a user's own jit object, a concrete own mesh
    bare = [jax.ShapeDtypeStruct(s.shape, s.dtype) for s in structs]
    assert not reusable(call, bare, jmesh, **mine)
    assert not reusable(call, structs, jmesh, program=jax.jit(ns["PROGRAM"]), own_mesh=ns["MESH"])
    assert not reusable(call, structs, jmesh, program=ns["PROGRAM"], own_mesh=jmesh)
    explicit, _, sharded = run_structs(ns, AxisType.Explicit)
    assert not reusable(call, sharded, explicit, **mine)
