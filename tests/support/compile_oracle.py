"""The compiler's own answer: shardings of a real compile on fake CPU devices.

Imported by tests only; the test process has 64 host devices (tests/conftest.py).
"""

from __future__ import annotations

import functools
from typing import Any


def compiled_io_shardings(program: Any) -> tuple[list[str], list[str]]:
    """HloSharding text of every flattened input and output of ``jax.jit(PROGRAM).compile()``.

    The arguments carry the program's SPECS as ``NamedSharding`` on a concrete mesh of Auto
    axes (unlisted arguments are left to propagation), exactly what ``propagate`` annotates.
    """
    import jax
    from jax.sharding import AxisType, NamedSharding

    from shardscope.backend.program.lower import load_python_namespace
    from shardscope.backend.sharding.spec import Spec

    ns = load_python_namespace(program.path, program.params)
    mesh = program.mesh
    jmesh = jax.make_mesh(
        tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
    )
    leaves, treedef = jax.tree.flatten(ns["EXAMPLE_ARGS"])
    names = program.arg_names
    assert len(names) == len(leaves)
    new = []
    for leaf, name in zip(leaves, names, strict=True):
        sharding = None
        if name in program.specs:
            spec = Spec.from_json(program.specs[name]).padded(len(leaf.shape))
            sharding = NamedSharding(jmesh, spec.to_jax())
        new.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    args = jax.tree.unflatten(treedef, new)
    with jax.set_mesh(jmesh):
        compiled = jax.jit(ns["PROGRAM"]).lower(*args).compile()
    ins = jax.tree.leaves(compiled.input_shardings[0])
    outs = jax.tree.leaves(compiled.output_shardings)
    in_shapes = [leaf.shape for leaf in leaves]
    out_shapes = [o.shape for o in jax.tree.leaves(compiled.out_info)]
    return (
        [str(s._to_xla_hlo_sharding(len(shape))) for s, shape in zip(ins, in_shapes, strict=True)],
        [
            str(s._to_xla_hlo_sharding(len(shape)))
            for s, shape in zip(outs, out_shapes, strict=True)
        ],
    )


def compiled_text(program: Any) -> str:
    """``jax.jit(PROGRAM).lower(...).compile().as_text()`` of a loaded program: on its
    own concrete ``MESH`` with its ``EXAMPLE_ARGS``' shardings where it has one, else on
    a mesh of Auto axes with its SPECS as ``compiled_io_shardings`` places them."""
    return lowered(program).compile().as_text()


def lowered(program: Any):
    """``jax.jit(PROGRAM).lower(...)`` of a loaded program, as ``compiled_text`` places
    its shardings."""
    import jax

    fn, args, mesh = jit_arguments(program)
    with jax.set_mesh(mesh):
        return jax.jit(fn).lower(*args)


def jit_arguments(program: Any):
    """``(PROGRAM, its arguments, the mesh)`` of a loaded program, as ``compiled_text``
    places its shardings: ``jax.ShapeDtypeStruct`` leaves, to be lowered within
    ``jax.set_mesh(mesh)``."""
    import jax
    from jax.sharding import AxisType, NamedSharding

    from shardscope.backend.program.lower import load_python_namespace
    from shardscope.backend.sharding.spec import Spec

    ns = load_python_namespace(program.path, program.params)
    if isinstance(ns["MESH"], jax.sharding.Mesh):
        return ns["PROGRAM"], ns["EXAMPLE_ARGS"], ns["MESH"]
    mesh = program.mesh
    jmesh = jax.make_mesh(
        tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
    )
    leaves, treedef = jax.tree.flatten(ns["EXAMPLE_ARGS"])
    new = []
    for leaf, name in zip(leaves, program.arg_names, strict=True):
        sharding = None
        if name in program.specs:
            spec = Spec.from_json(program.specs[name]).padded(len(leaf.shape))
            sharding = NamedSharding(jmesh, spec.to_jax())
        new.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    return ns["PROGRAM"], jax.tree.unflatten(treedef, new), jmesh


@functools.cache
def loaded(source: str):
    """``load_program(source)``, once per test session (each load starts a worker)."""
    from shardscope.backend.program.load import load_program

    return load_program(source)


@functools.cache
def propagated(source: str):
    """``propagate`` of a loaded program with its own MESH and SPECS, once per session."""
    from shardscope.backend.propagation.propagate import propagate

    return propagate(loaded(source))
