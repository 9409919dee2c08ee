"""The run worker's unsharded reference: its values, and a program that exits."""


def _transformer_inputs():
    import runpy

    from shardscope.backend.program.load import EXAMPLES_DIR
    from shardscope.backend.run.reference import program_inputs

    ns = runpy.run_path(str(EXAMPLES_DIR / "transformer.py"), run_name="__shardscope__")
    return ns, program_inputs(ns, 0)


def test_the_cheap_reference_compile_gives_the_unsharded_values():
    import jax
    import numpy as np

    from shardscope.backend.run.reference import REFERENCE_CPU_OPTIONS, ReferenceThread
    from shardscope.backend.run.shards import max_relative_error

    ns, inputs = _transformer_inputs()
    reference = ReferenceThread(inputs, tuple(ns["MESH"]), jax.devices()[0])
    got = reference.outputs()
    assert reference.unsharded.compiled is not None and REFERENCE_CPU_OPTIONS
    args, kwargs = jax.tree.unflatten(inputs.treedef, inputs.host)
    want = [np.asarray(x) for x in jax.tree.leaves(jax.jit(ns["PROGRAM"])(*args, **kwargs))]
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape
        assert max_relative_error(a, b) < 1e-4  # float32 sums fused another way


def test_a_reference_whose_program_exits_raises_an_error_not_the_exit():
    import sys

    import jax
    import numpy as np
    import pytest

    from shardscope.backend.run.reference import ProgramInputs, ReferenceFailed, ReferenceThread

    leaves = [np.ones((4,), np.float32)]
    inputs = ProgramInputs(lambda x: sys.exit(3), leaves, jax.tree.structure(((0,), {})), leaves)
    reference = ReferenceThread(inputs, ("data",), jax.devices()[0])
    with pytest.raises(ReferenceFailed, match=r"ended the process \(SystemExit\) while tracing"):
        reference.outputs()
