"""The unsharded reference on the CPU, in a child forked from the run worker: what a run
reports when it fails, that it runs on the worker's own inputs, and that it never
outlives the run."""

import textwrap
import time

import pytest

from shardscope.backend.errors import ShardscopeError
from shardscope.backend.run.dispatch import run
from shardscope.backend.run.request import ProgramFile, RunRequest
from tests.support.processes import gone_within

pytestmark = pytest.mark.slow

HEAD = """
import os, time
import jax, jax.numpy as jnp
import numpy as np

MESH = {"data": 2}
SPECS = {"x": jax.P("data")}


def unsharded():
    # Inside PROGRAM while tracing: the reference's mesh has every axis of size 1.
    return jax.sharding.get_abstract_mesh().size == 1


def note_pid(path):
    with open(path, "w") as f:
        f.write(str(os.getpid()))
"""


def _run(tmp_path, body, **options):
    path = tmp_path / "prog.py"
    path.write_text(HEAD + textwrap.dedent(body))
    program = ProgramFile(path, {}, name="prog", source=str(path), kind="python")
    return run(RunRequest(program, runs=1, **options)).result


def test_a_reference_that_aborts_is_a_note_and_the_run_stands(tmp_path):
    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            if unsharded():
                os.abort()
            return x * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
    )
    assert result.outputs[0].max_rel_error is None
    assert any(
        n.startswith("no unsharded reference: its process killed by SIGABRT") for n in result.notes
    ), result.notes
    assert result.outputs[0].shards  # the sharded run is reported all the same


def test_a_reference_that_raises_is_made_from_the_sharded_runs_own_module(tmp_path):
    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            if unsharded():
                raise ValueError("only sharded")
            return x * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
    )
    assert result.notes == []
    assert result.outputs[0].max_rel_error == 0.0


def test_a_reference_that_cannot_be_made_says_why_in_words_and_the_fix(tmp_path):
    # It raises unsharded, and its module calls back into Python: no stripped form runs.
    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            if unsharded():
                raise ValueError("only sharded")
            jax.debug.callback(lambda v: None, x)
            return x * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
    )
    assert result.outputs[0].max_rel_error is None
    assert result.notes == [
        "no unsharded reference: the program could not be traced or run unsharded (only "
        "sharded); make it trace on a mesh of any size (shard with PartitionSpecs under the "
        "mesh in context), or run with --no-reference"
    ]


def test_a_reference_jax_refuses_names_the_programs_line_not_jaxs_text(tmp_path):
    # JAX raises unsharded (a reshape it refuses), and its module calls back into Python.
    body = """
        def PROGRAM(x):
            y = jnp.reshape(x, (7,)) if unsharded() else x
            jax.debug.callback(lambda v: None, x)
            return y * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """
    result = _run(tmp_path, body)
    line = (
        (HEAD + textwrap.dedent(body))
        .splitlines()
        .index("    y = jnp.reshape(x, (7,)) if unsharded() else x")
    )
    assert result.outputs[0].max_rel_error is None
    assert result.notes == [
        f"no unsharded reference: the program could not be traced or run unsharded (JAX "
        f"refused line {line + 1} of prog.py); make it trace on a mesh of any size (shard "
        f"with PartitionSpecs under the mesh in context), or run with --no-reference"
    ]


def test_the_reference_runs_on_the_workers_arrays_not_a_second_import(tmp_path):
    # Each import of this file makes other data: the reference must use the run's.
    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            return jnp.tanh(x) @ x.T

        EXAMPLE_ARGS = (np.random.default_rng().standard_normal((8, 4)).astype(np.float32),)
        """,
    )
    assert result.outputs[0].max_rel_error is not None
    assert result.outputs[0].max_rel_error < 1e-5


def test_the_reference_child_does_not_outlive_a_failed_run(tmp_path):
    marker = tmp_path / "reference-pid"
    started = time.monotonic()
    with pytest.raises(ShardscopeError, match="sharded only"):
        _run(
            tmp_path,
            f"""
            def PROGRAM(x):
                if unsharded():
                    note_pid({str(marker)!r})
                    time.sleep(120)  # the reference hangs; the sharded run fails
                else:
                    for _ in range(200):  # until the reference is surely tracing
                        if os.path.exists({str(marker)!r}):
                            break
                        time.sleep(0.05)
                    raise ValueError("sharded only")
                return x

            EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
            """,
        )
    assert time.monotonic() - started < 60  # the run did not wait for the hung child
    assert gone_within(int(marker.read_text()), 5)


def test_without_a_reference_no_child_is_forked(tmp_path):
    marker = tmp_path / "traced-unsharded"
    result = _run(
        tmp_path,
        f"""
        def PROGRAM(x):
            if unsharded():
                open({str(marker)!r}, "w").close()
            return x + 1

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
        reference=False,
    )
    assert not marker.exists()
    assert "no unsharded reference: not asked for" in result.notes


def test_a_reference_out_of_memory_is_a_note_about_its_half_of_the_limit(tmp_path, monkeypatch):
    # 4 GB for the run: the reference child gets 2 GB, and this asks for 3.
    monkeypatch.setenv("SHARDSCOPE_WORKER_MEMORY_GB", "4")
    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            if unsharded():
                np.ones(3 * 2**30 // 8)
            return x * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
    )
    assert (
        "no unsharded reference: it (given half the run's memory) ran out of memory (limit 4 GB)"
        in " ".join(result.notes)
    ), result.notes
    assert result.outputs[0].shards


def test_a_reference_that_hangs_is_given_up_before_the_runs_time_limit(tmp_path):
    marker = tmp_path / "reference-pid"
    started = time.monotonic()
    result = _run(
        tmp_path,
        f"""
        def PROGRAM(x):
            if unsharded():
                note_pid({str(marker)!r})
                time.sleep(600)
            return x * 2

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
        timeout=20,
    )
    assert time.monotonic() - started < 40
    assert (
        "no unsharded reference: it did not finish within 80% of the run's time limit; allow "
        "more time (--timeout) or run without it (--no-reference)" in result.notes
    ), result.notes
    assert result.outputs[0].shards
    assert gone_within(int(marker.read_text()), 5)


def test_each_output_carries_jaxs_own_name_of_its_place_in_the_return_value(tmp_path):
    import re

    import jax
    import jax.numpy as jnp

    result = _run(
        tmp_path,
        """
        def PROGRAM(x):
            return {"b": (x * 2, x.sum()), "a": x + 1}

        EXAMPLE_ARGS = (jax.ShapeDtypeStruct((8, 4), jnp.float32),)
        """,
    )
    lowered = jax.jit(lambda x: {"b": (x * 2, x.sum()), "a": x + 1}).lower(
        jax.ShapeDtypeStruct((8, 4), jnp.float32)
    )
    want = re.findall(r'jax.result_info = "([^"]*)"', lowered.as_text())
    assert (
        [t.path for t in result.outputs]
        == want
        == [
            "result['a']",
            "result['b'][0]",
            "result['b'][1]",
        ]
    )
    assert [t.label for t in result.outputs] == [
        "result[0] ['a']",
        "result[1] ['b'][0]",
        "result[2] ['b'][1]",
    ]
    assert all(t.path == "" and t.label == t.name for t in result.arguments)
