"""The run worker's stages: a mesh too large for the devices is refused in one line."""

import pytest

from shardscope.backend.run.program_run import too_many_devices
from shardscope.backend.sharding.mesh import Mesh


def test_too_many_devices_names_both_numbers():
    message = too_many_devices(Mesh.from_dict({"data": 8}), 1, "gpu")
    assert message == (
        "the mesh data=8 needs 8 devices but 1 GPU device is attached: use a mesh of at most "
        "1 device (--mesh), or run where 8 are attached"
    )


# Programs the unsharded reference on one device cannot trace as they are: each enters,
# pins or sets a mesh of its own, or runs shard_map on a mesh it builds.
OWN_MESH_PROGRAMS = [
    "run_eqx_enters_mesh",  # eqx.filter_jit step entering its 8-device mesh
    "run_explicit_set_mesh",  # jax.set_mesh at import, jax.sharding.reshard on Explicit axes
    "run_import_mesh",  # MESH = mesh built at import, NamedShardings on its devices
    "run_pinned_mesh",  # a 4-device mesh built at import
    "run_collective_matmul",  # shard_map(mesh=jax.make_mesh(...)) with a MESH dict
    "run_bernoulli_keys",  # jax.random.bernoulli on a typed key and a raw PRNGKey
]

# In a fresh interpreter with 8 fake CPU devices: the program's own jax.jit compile, on
# its MESH (or the mesh it set at import) with SPECS placed by argument name; each
# argument's and result's HloSharding.
ORACLE = """
import inspect, json, runpy, sys
import jax
from jax.sharding import AxisType, Mesh, NamedSharding

ns = runpy.run_path(sys.argv[1], run_name="__shardscope__")
mesh = ns.get("MESH")
if isinstance(mesh, dict):
    mesh = jax.make_mesh(tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh))
program, args = ns["PROGRAM"], ns["EXAMPLE_ARGS"]
if type(program).__module__.startswith("equinox"):  # its filter_jit takes arrays
    import jax.numpy as jnp
    # Made outside the mesh, as a data loader's: uncommitted, so the compile chooses
    # their shardings as it does for a ShapeDtypeStruct (jnp.zeros under jax.set_mesh of
    # Explicit axes would commit them replicated on the mesh).
    args = tuple(
        jnp.zeros(a.shape, a.dtype) if isinstance(a, jax.ShapeDtypeStruct) else a for a in args
    )
# jax.set_mesh sets the mesh as it is called, not only as a context.
context = jax.set_mesh(mesh) if mesh is not None else jax.sharding.use_abstract_mesh(
    jax.sharding.get_abstract_mesh()
)
with context:
    if not type(program).__module__.startswith("equinox"):
        names = list(inspect.signature(getattr(program, "__wrapped__", program)).parameters)
        specs = ns.get("SPECS") or {}
        args = tuple(
            jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, specs[n]))
            if n in specs and isinstance(a, jax.ShapeDtypeStruct) else a
            for n, a in zip(names, args)
        )
    lowered = program.lower(*args) if hasattr(program, "lower") else jax.jit(program).lower(*args)
    compiled = getattr(lowered, "lowered", lowered).compile()
kept = sorted(getattr(lowered, "lowered", lowered)._lowering.compile_args["kept_var_idx"])
def hlo(shardings, avals):
    return [str(s._to_xla_hlo_sharding(len(a.shape))) for s, a in zip(shardings, avals, strict=True)]
ins = jax.tree.leaves(compiled.input_shardings[0])
avals = jax.tree.leaves(compiled.in_avals)
print(json.dumps({
    "args": hlo([ins[i] for i in kept] if len(ins) > len(kept) else ins, [avals[i] for i in kept] if len(avals) > len(kept) else avals),
    "results": hlo(jax.tree.leaves(compiled.output_shardings), jax.tree.leaves(compiled.out_info)),
}))
"""


def _subprocess(argv):
    import os
    import subprocess

    from tests.support.inputs import REPO

    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
        "SHARDSCOPE_CACHE_DIR": "off",
    }
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", OWN_MESH_PROGRAMS)
def test_a_program_with_a_mesh_of_its_own_runs_as_jax_compiles_it_and_every_output_has_its_error(
    name,
):
    import json
    import sys

    from tests.support.inputs import PROGRAMS, REPO

    if name == "run_eqx_enters_mesh":
        pytest.importorskip("equinox")
    path = str(PROGRAMS / f"{name}.py")
    want = json.loads(_subprocess([sys.executable, "-c", ORACLE, path]).splitlines()[-1])
    ran = json.loads(
        _subprocess([sys.executable, str(REPO / "main.py"), "run", path, "--json", "--runs", "1"])
    )
    assert [a["hlo_sharding"] for a in ran["arguments"]] == want["args"], name
    assert [o["hlo_sharding"] for o in ran["outputs"]] == want["results"], name
    # The program is sharded for real: not a comparison of replicas.
    assert any("devices=" in s for s in want["args"] + want["results"]), name
    for output in ran["outputs"]:
        assert output["max_rel_error"] is not None, (name, output["name"], ran["notes"])
        assert output["max_rel_error"] < 1e-5, (name, output["name"])
    assert all("Error:" not in note for note in ran["notes"]), ran["notes"]


# In a fresh interpreter with 8 fake CPU devices: jax.jit's own compile of PROGRAM, its
# arguments placed by SPECS on MESH (a dict becomes jax.make_mesh's mesh, default axis
# types); each argument's and result's HloSharding and each collective's kind and pairs
# or groups, as the compiled HLO text has them.
EXPLICIT_ORACLE = r"""
import inspect, json, re, runpy, sys
import jax
from jax.sharding import NamedSharding

ns = runpy.run_path(sys.argv[1], run_name="__shardscope__")
mesh = ns["MESH"]
if isinstance(mesh, dict):
    mesh = jax.make_mesh(tuple(mesh.values()), tuple(mesh))
names = list(inspect.signature(ns["PROGRAM"]).parameters)
args = [
    jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, ns["SPECS"][n]))
    for n, a in zip(names, ns["EXAMPLE_ARGS"])
]
compiled = jax.jit(ns["PROGRAM"]).lower(*args).compile()
def hlo(shardings, avals):
    return [str(s._to_xla_hlo_sharding(len(a.shape))) for s, a in zip(shardings, avals)]
collectives = [
    [kind, [[int(d) for d in g.split(",")] for g in re.findall(r"\{([\d,]+)\}", groups)]]
    for kind, groups in re.findall(
        r"= \S+ (all-reduce|all-gather|all-to-all|reduce-scatter|collective-permute)\(.*?"
        r"(?:source_target_pairs|replica_groups)=(\{(?:\{[\d,]*\},?)*\})",
        compiled.as_text(),
    )
]
print(json.dumps({
    "args": hlo(jax.tree.leaves(compiled.input_shardings[0]), jax.tree.leaves(compiled.in_avals)),
    "results": hlo(jax.tree.leaves(compiled.output_shardings), jax.tree.leaves(compiled.out_info)),
    "collectives": collectives,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["run_collective_matmul_explicit", "run_collective_matmul_explicit_mesh"]
)
def test_a_shard_map_on_a_mesh_of_explicit_axes_loads_propagates_and_runs_as_jax_compiles_it(
    name,
):
    import json
    import sys

    from tests.support.inputs import PROGRAMS, REPO

    path = str(PROGRAMS / f"{name}.py")
    want = json.loads(_subprocess([sys.executable, "-c", EXPLICIT_ORACLE, path]).splitlines()[-1])
    assert want["collectives"] and any("devices=" in s for s in want["args"]), want
    main = [sys.executable, str(REPO / "main.py")]
    ran = json.loads(_subprocess([*main, "run", path, "--json", "--runs", "1"]))
    assert [a["hlo_sharding"] for a in ran["arguments"]] == want["args"]
    assert [o["hlo_sharding"] for o in ran["outputs"]] == want["results"]
    assert [[c["kind"], c["device_groups"]] for c in ran["collectives"]] == want["collectives"]
    assert all(o["max_rel_error"] is not None and o["max_rel_error"] < 1e-5 for o in ran["outputs"])
    shown = json.loads(_subprocess([*main, "propagate", path, "--json"]))
    values = {
        v["name"]: v["hlo_sharding"] for v in shown["values"] if v["role"] in ("arg", "result")
    }
    assert [values["x"], values["w"]] == want["args"]
    assert values["result[0]"] == want["results"][0]
    assert [[c["kind"], c["device_groups"]] for c in shown["collectives"]] == want["collectives"]


# shard_map programs whose shard_map takes the mesh in context (no mesh=, or
# get_abstract_mesh()): each gets the same-mesh reference.
CONTEXT_SHARD_MAP_PROGRAMS = [
    "explain_moe",  # @partial(jax.shard_map, ...) at module level, value_and_grad
    "shard_map_module_grad",  # @jax.shard_map(...) at module level, jax.grad
    "shard_map_module_scan",  # @jax.shard_map(...) at module level as a scan's body
    "shard_map_module_jit",  # the same, PROGRAM a jax.jit object of the user's
    "shard_map_abstract_mesh",  # shard_map(mesh=get_abstract_mesh()) inside PROGRAM
    "shard_map_moe_make_mesh",  # explain_moe's layer, MESH = jax.make_mesh(...) Auto
]


@pytest.mark.slow
@pytest.mark.parametrize("name", CONTEXT_SHARD_MAP_PROGRAMS)
def test_a_shard_map_on_the_context_mesh_runs_as_jax_compiles_it_with_the_same_mesh_reference(
    name,
):
    import json
    import sys

    from shardscope.backend.run.worker_reference import SAME_MESH
    from tests.support.inputs import PROGRAMS, REPO

    path = str(PROGRAMS / f"{name}.py")
    want = json.loads(_subprocess([sys.executable, "-c", ORACLE, path]).splitlines()[-1])
    ran = json.loads(
        _subprocess([sys.executable, str(REPO / "main.py"), "run", path, "--json", "--runs", "1"])
    )
    assert [a["hlo_sharding"] for a in ran["arguments"]] == want["args"], name
    assert [o["hlo_sharding"] for o in ran["outputs"]] == want["results"], name
    assert any("devices=" in s for s in want["args"] + want["results"]), name
    assert ran["collectives"], name
    assert ran["notes"] == [SAME_MESH], name
    for output in ran["outputs"]:
        assert output["max_rel_error"] is not None, (name, output["name"])
        assert output["max_rel_error"] < 1e-5, (name, output["name"])


@pytest.mark.slow
def test_a_module_level_shard_map_on_another_mesh_than_its_first_is_refused_in_one_line():
    import os
    import subprocess
    import sys

    from tests.support.inputs import PROGRAMS, REPO

    path = PROGRAMS / "explain_moe.py"
    line = path.read_text().splitlines().index("    out, aux = experts(tokens, w)") + 1
    argv = [sys.executable, str(REPO / "main.py"), "run", str(path), "--mesh", "expert=2"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "SHARDSCOPE_CACHE_DIR": "off"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode != 0
    error = done.stderr.strip()
    assert "\n" not in error and "Traceback" not in error, error
    assert error.startswith(f"error: {path}:{line}: this shard_map takes the mesh in context")
    assert "expert=2" in error and "leave out --mesh" in error
    assert "AbstractMesh" not in error
