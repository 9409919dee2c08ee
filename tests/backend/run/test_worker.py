"""The run worker's own lines: refusals and failures in one line."""

from shardscope.backend.run.worker import failure_line, too_many_devices
from shardscope.backend.sharding.mesh import Mesh


def test_too_many_devices_names_both_numbers():
    message = too_many_devices(Mesh.from_dict({"data": 8}), 1, "gpu")
    assert message == (
        "the mesh data=8 needs 8 devices but 1 GPU device is attached: use a mesh of at most "
        "1 device (--mesh), or run where 8 are attached"
    )


def _raise(exc):
    try:
        raise exc
    except Exception as caught:  # noqa: BLE001
        return caught


def test_a_quoted_traceback_gives_the_programs_line_and_innermost_error():
    text = (
        "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):\n"
        '  File "/lib/jax/callback.py", line 816, in _wrapped_callback\n'
        '  File "/home/u/prog.py", line 9, in _fail\n'
        "ValueError: the program's own failure"
    )
    line = failure_line("/home/u/prog.py", _raise(RuntimeError(text)))
    assert line == (
        "/home/u/prog.py:9: the run failed: ValueError: the program's own failure; fix the "
        "program and run it again"
    )


def test_a_plain_error_keeps_its_first_line():
    line = failure_line("/home/u/prog.py", _raise(TypeError("bad operand\nmore detail")))
    assert line == (
        "/home/u/prog.py: the run failed: TypeError: bad operand; fix the program and run it again"
    )
    assert "\n" not in failure_line("/p.py", _raise(ValueError("x" * 1000)))


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
    with pytest.raises(ReferenceFailed, match="SystemExit while tracing it unsharded"):
        reference.outputs()
