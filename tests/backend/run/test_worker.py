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

    import jax

    from shardscope.backend.program.load import EXAMPLES_DIR
    from shardscope.backend.run.inputs import input_data

    ns = runpy.run_path(str(EXAMPLES_DIR / "transformer.py"), run_name="__shardscope__")
    leaves, treedef = jax.tree.flatten((ns["EXAMPLE_ARGS"], {}))
    host = [input_data(leaf, i) for i, leaf in enumerate(leaves)]
    structs = [jax.ShapeDtypeStruct(leaf.shape, leaf.dtype) for leaf in leaves]
    return ns, treedef, host, structs


def test_the_cheap_reference_compile_gives_the_unsharded_values():
    import jax
    import numpy as np

    from shardscope.backend.run.shards import max_relative_error
    from shardscope.backend.run.worker import REFERENCE_CPU_OPTIONS, _Reference

    ns, treedef, host, structs = _transformer_inputs()
    reference = _Reference(
        ns["PROGRAM"], Mesh.from_dict(ns["MESH"]), jax.devices()[0], host, treedef, structs
    )
    got = reference.outputs()
    assert reference.compiled is not None and REFERENCE_CPU_OPTIONS
    args, kwargs = jax.tree.unflatten(treedef, host)
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

    from shardscope.backend.run.worker import _Reference

    host = [np.ones((4,), np.float32)]
    treedef = jax.tree.structure(((0,), {}))
    structs = [jax.ShapeDtypeStruct((4,), np.float32)]
    reference = _Reference(
        lambda x: sys.exit(3), Mesh.from_dict({"data": 2}), jax.devices()[0], host, treedef, structs
    )
    with pytest.raises(RuntimeError, match="SystemExit while tracing it unsharded"):
        reference.outputs()
