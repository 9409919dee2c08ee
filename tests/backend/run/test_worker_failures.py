"""A failure of the program the run worker runs, in one line."""

from shardscope.backend.run.worker_failures import failure_line, run_failed


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


def test_why_no_reference_is_words_and_the_fix_without_the_exceptions_kind():
    from shardscope.backend.run.worker_failures import reference_words

    words = reference_words(_raise(ValueError("use_abstract_mesh cannot change\nthe size")))
    assert words == (
        "the program could not be traced or run unsharded (use_abstract_mesh cannot change); "
        "make it trace on a mesh of any size (shard with PartitionSpecs under the mesh in "
        "context), or run with --no-reference"
    )
    assert "ValueError" not in reference_words(_raise(ValueError("")))
    assert len(reference_words(_raise(TypeError("y" * 1000)))) < 400


JAX_REFUSES = """\
import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, PartitionSpec as P


@jax.shard_map(in_specs=P("data"), out_specs=P())
def total(x):
    return jax.lax.psum(jnp.sum(x), "data")


def program(x):
    return total(x) * 2


def run(mesh):
    plain = AbstractMesh((4,), ("data",), axis_types=(AxisType.Auto,))
    x = jax.ShapeDtypeStruct((8,), jnp.float32)
    with jax.sharding.use_abstract_mesh(plain):
        jax.jit(program).trace(x)
    with jax.set_mesh(mesh):
        jax.jit(program).trace(x)
"""


def test_why_no_reference_names_the_programs_line_without_jaxs_own_text(tmp_path):
    import runpy

    import jax
    import pytest

    from shardscope.backend.run.worker_failures import reference_words

    path = tmp_path / "prog.py"
    path.write_text(JAX_REFUSES)
    ns = runpy.run_path(str(path))
    mesh = jax.make_mesh((4,), ("data",))
    line = JAX_REFUSES.splitlines().index("    return total(x) * 2") + 1
    for filtering in ("off", "quiet_remove_frames"):
        before = jax.config.jax_traceback_filtering
        jax.config.update("jax_traceback_filtering", filtering)
        try:
            with pytest.raises(ValueError, match="AbstractMesh") as raised:
                ns["run"](mesh)
        finally:
            jax.config.update("jax_traceback_filtering", before)
        words = reference_words(raised.value, str(path))
        assert words == (
            f"the program could not be traced or run unsharded (JAX refused line {line} of "
            "prog.py); make it trace on a mesh of any size (shard with PartitionSpecs under "
            "the mesh in context), or run with --no-reference"
        ), filtering
        assert "AbstractMesh" not in reference_words(raised.value)


def test_a_shard_map_that_keeps_its_first_mesh_is_one_line_with_the_fix(tmp_path):
    import runpy

    import jax
    import pytest

    from shardscope.backend.run.worker_failures import shard_map_kept_mesh

    path = tmp_path / "prog.py"
    path.write_text(JAX_REFUSES)
    ns = runpy.run_path(str(path))
    with pytest.raises(ValueError, match="AbstractMesh") as raised:
        ns["run"](jax.make_mesh((4,), ("data",)))
    line = JAX_REFUSES.splitlines().index("    return total(x) * 2") + 1
    words = shard_map_kept_mesh(str(path), raised.value, "data=4")
    assert words is not None and words.startswith(f"{path}:{line}: this shard_map takes")
    assert "data=4" in words and "AbstractMesh" not in words and "\n" not in words
    assert shard_map_kept_mesh(str(path), _raise(ValueError("other")), "data=4") is None


def test_a_failure_is_said_once_where_the_line_already_says_it():
    line = failure_line("/p.py", _raise(RuntimeError("boom")))
    assert run_failed(line) == (
        "the run failed: /p.py: RuntimeError: boom; fix the program and run it again"
    )
    assert run_failed(f"host 1 of 2: {line}").startswith("the run failed: host 1 of 2: /p.py: ")
    assert run_failed(f"host 1 of 2: {line}").count("run failed") == 1
    assert run_failed("the worker ran out of time") == "the run failed: the worker ran out of time"
    assert run_failed("The run failed: x") == "the run failed: x"
