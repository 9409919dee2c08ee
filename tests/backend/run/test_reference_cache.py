"""Kept reference outputs: keyed by module and inputs, bounded, robust to damage, never for
modules that call back into Python, and what a second run of a program reports."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import jax
import numpy as np
import pytest

from shardscope.app.cli.run import summary
from shardscope.backend.run import reference_cache
from shardscope.backend.run.dispatch import run as run_request
from shardscope.backend.run.reference_cache import KEPT, ReferenceCache, cache_root
from shardscope.backend.run.request import ProgramFile, RunRequest
from tests.support.inputs import REPO

CPU = jax.devices("cpu")[0]
MODULE = "module @jit_f { func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> }"


def _inputs(seed=0):
    return [np.random.default_rng(seed).standard_normal((4, 3)).astype(np.float32)]


def test_outputs_come_back_for_the_same_module_and_inputs_only(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, {"xla_backend_optimization_level": 1})
    assert not cache.knows(key)
    outputs = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array(3, np.int32)]
    cache.store(key, _inputs(), outputs)
    assert cache.knows(key)
    got = cache.load(key, _inputs())
    assert [a.tolist() for a in got] == [a.tolist() for a in outputs]
    assert [a.dtype for a in got] == [np.float32, np.int32]
    assert cache.load(key, _inputs(seed=1)) is None  # other data
    other = cache.program_key(MODULE.replace("4x", "8x"), CPU, None)
    assert other != key and not cache.knows(other)


def test_the_key_names_the_compile_options_and_flags(tmp_path, monkeypatch):
    cache = ReferenceCache(tmp_path)
    base = cache.program_key(MODULE, CPU, None)
    assert cache.program_key(MODULE, CPU, {"xla_backend_optimization_level": 1}) != base
    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", "") + " --xla_cpu_ftz=true")
    assert cache.program_key(MODULE, CPU, None) != base


def test_a_module_that_calls_back_into_python_is_never_kept(tmp_path):
    def program(x):
        jax.debug.print("x {}", x)
        return x * 2

    text = jax.jit(program).lower(np.ones(4, np.float32)).as_text()
    assert ReferenceCache(tmp_path).program_key(text, CPU, None) is None
    plain = jax.jit(lambda x: x * 2).lower(np.ones(4, np.float32)).as_text()
    assert ReferenceCache(tmp_path).program_key(plain, CPU, None) is not None


def test_a_damaged_entry_is_a_miss_and_is_removed(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(), [np.ones(3)])
    (entry,) = (tmp_path / key).glob("*.npz")
    entry.write_bytes(b"not an npz file")
    assert cache.load(key, _inputs()) is None
    assert not entry.exists()


def _entry(root):
    (entry,) = root.glob("*/*.npz")
    return entry


def _rewrite(entry, change):
    """Write the entry again with ``change(fields, record)`` applied to its fields."""
    with np.load(entry) as data:
        fields = {name: data[name] for name in data.files}
    record = json.loads(fields["record"].tobytes())
    change(fields, record)
    fields["record"] = np.frombuffer(json.dumps(record).encode(), np.uint8)
    with open(entry, "wb") as f:
        np.savez(f, **fields)


def _slightly_off(fields, record):
    fields["arr_0"] = (fields["arr_0"].view(np.float64) * (1 + 1e-3)).view(np.uint8)


def _lookup_within(cache, key, inputs, expected=None, seconds=10):
    """``cache.lookup`` in a thread, which must return within ``seconds``."""
    got = []
    reader = threading.Thread(target=lambda: got.append(cache.lookup(key, inputs, expected)))
    reader.daemon = True
    reader.start()
    reader.join(seconds)
    assert not reader.is_alive(), "the lookup hung"
    return got[0]


def test_an_entry_whose_values_are_off_is_refused_and_removed(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(), [np.ones(3)])
    _rewrite(_entry(tmp_path), _slightly_off)
    assert cache.lookup(key, _inputs()) == (None, "output 0's values do not match their SHA-256")
    assert not list(tmp_path.glob("*/*.npz"))


def test_an_entry_is_used_only_under_the_key_and_inputs_it_was_stored_for(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    other = cache.program_key(MODULE, CPU, {"xla_backend_optimization_level": 1})
    cache.store(key, _inputs(), [np.ones(3)])
    entry = _entry(tmp_path)
    (tmp_path / other).mkdir()
    os.link(entry, tmp_path / other / entry.name)
    assert cache.lookup(other, _inputs())[1] == "it was stored under another module's key"
    os.link(entry, entry.with_name(cache._path(key, _inputs(1)).name))
    assert cache.lookup(key, _inputs(1))[1] == "it was stored for other inputs"
    outputs, refused = cache.lookup(key, _inputs())
    assert refused is None and outputs[0].tolist() == [1.0, 1.0, 1.0]


def test_an_entry_of_other_shapes_or_dtypes_than_the_program_gives_is_refused(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(), [np.ones((2, 3), np.float32)])
    outputs, refused = cache.lookup(key, _inputs(), [((2, 3), np.float32)])
    assert refused is None and outputs[0].shape == (2, 3) and outputs[0].dtype == np.float32
    assert cache.lookup(key, _inputs(), [((3, 2), np.float32)]) == (
        None,
        "output 0 is float32[2, 3] where the program gives float32[3, 2]",
    )
    cache.store(key, _inputs(), [np.ones((2, 3), np.float32)])
    assert cache.lookup(key, _inputs(), [((2, 3), np.float32)] * 2)[1] == (
        "it holds 1 outputs where the program gives 2"
    )
    import ml_dtypes

    cache.store(key, _inputs(), [np.ones(4, ml_dtypes.bfloat16)])
    (back,), refused = cache.lookup(key, _inputs(), [((4,), jax.numpy.bfloat16)])
    assert refused is None and back.dtype == jax.numpy.bfloat16 and back.tolist() == [1.0] * 4


def test_only_regular_files_are_opened(tmp_path):
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(), [np.ones(3)])
    entry = _entry(tmp_path)
    kept = tmp_path / "elsewhere.npz"
    os.replace(entry, kept)
    entry.symlink_to(kept)
    assert _lookup_within(cache, key, _inputs()) == (
        None,
        "it is a symbolic link, not a regular file",
    )
    assert not entry.is_symlink() and kept.exists()
    os.mkfifo(entry)
    assert _lookup_within(cache, key, _inputs()) == (
        None,
        "it is a pipe (FIFO), not a regular file",
    )
    assert not entry.exists()
    entry.mkdir()
    assert _lookup_within(cache, key, _inputs())[0] is None


def test_entries_too_large_are_not_kept_and_the_least_recently_used_go(tmp_path, monkeypatch):
    monkeypatch.setattr(reference_cache, "MAX_ENTRY_BYTES", 1000)
    cache = ReferenceCache(tmp_path)
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(0), [np.zeros(1000)])
    assert not cache.knows(key)
    for seed in range(3):
        cache.store(key, _inputs(seed), [np.zeros(100)])
        time.sleep(0.01)
    cache.load(key, _inputs(0))  # used: now the most recent
    size = next((tmp_path / key).glob("*.npz")).stat().st_size
    cache.prune(limit=2 * size)
    assert cache.load(key, _inputs(0)) is not None
    assert cache.load(key, _inputs(1)) is None  # the least recently used
    assert cache.load(key, _inputs(2)) is not None


def test_an_unwritable_folder_only_costs_time(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    cache = ReferenceCache(blocked / "reference")
    key = cache.program_key(MODULE, CPU, None)
    cache.store(key, _inputs(), [np.ones(3)])  # no error
    assert cache.load(key, _inputs()) is None


def test_where_it_lives(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDSCOPE_CACHE_DIR", "off")
    assert cache_root() is None and ReferenceCache.here() is None
    monkeypatch.setenv("SHARDSCOPE_CACHE_DIR", str(tmp_path))
    assert cache_root() == tmp_path / "reference"
    monkeypatch.delenv("SHARDSCOPE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "shardscope" / "reference"


PROGRAM = """
import jax, jax.numpy as jnp

MESH = {"data": 2}
SPECS = {"x": jax.P("data")}


def PROGRAM(x, w):
    return jnp.tanh(x @ w).sum(axis=0)


EXAMPLE_ARGS = (
    jax.ShapeDtypeStruct((8, 16), jnp.float32),
    jax.ShapeDtypeStruct((16, 4), jnp.float32),
)
"""


@pytest.mark.slow
def test_a_program_run_again_reuses_its_reference_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("SHARDSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))

    def run(**options):
        program = ProgramFile(path, {}, name="prog", source=str(path), kind="python")
        return run_request(RunRequest(program, runs=1, **options)).result

    first = run()
    assert not first.reference_kept and first.to_json()["reference_kept"] is False
    # Other specs and the same inputs: the unsharded module is the same one.
    again = run(specs={"x": "_,_", "w": "_,data"})
    assert again.reference_kept
    assert again.outputs[0].max_rel_error is not None
    assert again.outputs[0].max_rel_error < 1e-5
    assert KEPT in summary(again) and KEPT not in summary(first)
    # Another seed: other inputs, computed afresh.
    other = run(seed=7)
    assert not other.reference_kept
    assert other.outputs[0].max_rel_error < 1e-5


def _cli_run(path, cache):
    """``python main.py run PATH --json`` with its reference kept in ``cache``."""
    env = dict(os.environ, SHARDSCOPE_CACHE_DIR=str(cache))
    argv = [sys.executable, str(REPO / "main.py"), "run", str(path), "--json", "--runs", "1"]
    argv += ["--timeout", "60"]
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_run_never_uses_a_kept_reference_that_fails_its_checks(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))
    cache = tmp_path / "cache"
    first = _cli_run(path, cache)
    error = first["outputs"][0]["max_rel_error"]
    assert error < 1e-5 and not first["reference_kept"]
    entry = _entry(cache / "reference")

    def slightly_off(fields, record):
        fields["arr_0"] = (fields["arr_0"].view(np.float32) * (1 + 1e-3)).view(np.uint8)

    def other_shape(fields, record):
        fields["arr_0"] = np.zeros(3, np.float32).view(np.uint8)
        record["outputs"][0]["shape"] = [3]
        record["outputs"][0]["sha256"] = reference_cache._digest(np.zeros(3, np.float32))

    for change, why in ((slightly_off, "SHA-256"), (other_shape, "where the program gives")):
        _rewrite(entry, change)
        again = _cli_run(path, cache)
        assert not again["reference_kept"]
        assert again["outputs"][0]["max_rel_error"] == error
        (note,) = [n for n in again["notes"] if "refused" in n]
        assert why in note
        kept = _cli_run(path, cache)  # stored afresh
        assert kept["reference_kept"] and not any("refused" in n for n in kept["notes"])
    entry.unlink()
    os.mkfifo(entry)
    started = time.monotonic()
    fifo = _cli_run(path, cache)
    assert time.monotonic() - started < 60
    assert fifo["outputs"][0]["max_rel_error"] == error
    assert any("it is a pipe (FIFO), not a regular file" in n for n in fifo["notes"])
