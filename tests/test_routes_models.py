"""Real Flax NNX and Equinox programs get the compiler's answer on every route.

Each program under tests/inputs/programs/ (a Flax NNX training step under ``nnx.jit`` with
an ``nnx.Optimizer``, an NNX forward pass on parameters sharded with
``nnx.get_partition_spec``, an ``eqx.filter_jit`` step with the Module as an argument, a
plain ``jax.jit`` over ``nnx.split``'s state) goes through the program-file route
(``propagate FILE --json``), ``shardscope.inspect`` and ``capture`` (then ``propagate
capture.json --json``), and each is held against the program's own ``.lower(...).compile()``
on fake CPU devices: the number of arguments and results, each one's sharding, and the
collectives by kind (the compiled ones ``propagate`` lists; a combined collective counts
once per operand). ``run FILE --json`` and the window's Run on devices
(``run_program``) compile the same arguments and results, and check every output against the
unsharded reference.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from tests.support.inputs import REPO

PROGRAMS = REPO / "tests" / "inputs" / "programs"
CASES = [
    ("nnx_train", ("flax", "optax")),
    ("nnx_sharded", ("flax",)),
    ("eqx_train", ("equinox", "optax")),
    ("nnx_split", ("flax",)),
]

# Run in a fresh interpreter with 8 fake CPU devices: the program's own compile (on the
# arguments its ``placed(mesh)`` gives, as the script runs it) and shardscope.inspect of its
# PROGRAM, EXAMPLE_ARGS, MESH and SPECS.
ORACLE = textwrap.dedent(
    """
    import json, runpy, sys
    from collections import Counter

    import jax
    from jax.sharding import AxisType, Mesh

    import shardscope
    from shardscope.backend.hlo.hlo_collectives import read_collectives

    ns = runpy.run_path(sys.argv[1], run_name="__shardscope__")
    mesh = ns["MESH"]
    if not isinstance(mesh, Mesh):
        mesh = jax.make_mesh(
            tuple(mesh.values()), tuple(mesh), axis_types=(AxisType.Auto,) * len(mesh)
        )
    program = ns["PROGRAM"]
    with jax.set_mesh(mesh):
        args = ns["placed"](mesh)
        lowered = program.lower(*args) if hasattr(program, "lower") else jax.jit(program).lower(*args)
        compiled = getattr(lowered, "lowered", lowered).compile()

    def hlo(shardings, avals):
        return [str(s._to_xla_hlo_sharding(len(a.shape))) for s, a in zip(shardings, avals, strict=True)]

    kinds = Counter()
    for c in read_collectives(compiled.as_text()):
        kinds[c["kind"].replace("-", "_")] += max(c["operands"], 1)
    r = shardscope.inspect(
        program, *ns["EXAMPLE_ARGS"], mesh=ns["MESH"], in_shardings=ns.get("SPECS"),
        **(ns.get("EXAMPLE_KWARGS") or {}),
    )
    main = r.graph.functions[r.graph.main]
    print(json.dumps({
        "compiled": {
            "args": hlo(jax.tree.leaves(compiled.input_shardings[0]), jax.tree.leaves(compiled.in_avals)),
            "results": hlo(jax.tree.leaves(compiled.output_shardings), jax.tree.leaves(compiled.out_info)),
            "collectives": dict(kinds),
        },
        "inspect": {
            "args": [r.value(v).hlo_sharding for v in main.arguments],
            "names": [r.value(v).name for v in main.arguments],
            "by_name": [r.value(r.value(v).name).id == r.value(v).id for v in main.arguments],
            "results": [r.value(f"result[{i}]").hlo_sharding for i in range(len(main.results))],
            "collectives": dict(Counter(
                k for c in r.compiled_collectives
                for k in [c.kind.replace("-", "_")] * max(c.operands, 1)
            )),
        },
    }))
    """
)


def _env() -> dict:
    return {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
    }


def _run(argv: list[str], timeout: float = 300) -> str:
    proc = subprocess.run(
        argv, env=_env(), capture_output=True, text=True, timeout=timeout, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _cli(*argv: str) -> dict:
    return json.loads(_run([sys.executable, str(REPO / "main.py"), *argv]))


def _from_propagate_json(result: dict) -> dict:
    """Arguments in order, the results the JSON lists by index (a result that is an
    argument itself is listed as that argument), and the collectives by kind."""
    values = sorted(result["values"], key=lambda v: v["id"])
    results = {
        int(v["name"][len("result[") : -1]): v["hlo_sharding"]
        for v in values
        if v["role"] == "result" and (v["name"] or "").startswith("result[")
    }
    return {
        "args": [v["hlo_sharding"] for v in values if v["role"] == "arg"],
        "results": results,
        "collectives": dict(
            Counter(
                k
                for c in result["collectives"]
                for k in [c["kind"].replace("-", "_")] * max(c["operands"], 1)
            )
        ),
    }


def _agrees(route: dict, compiled: dict, name: str) -> None:
    assert route["args"] == compiled["args"], name
    assert route["collectives"] == compiled["collectives"], name
    results = route["results"]
    if isinstance(results, dict):
        assert results, name
        for index, sharding in results.items():
            assert sharding == compiled["results"][index], f"{name}: result[{index}]"
    else:
        assert results == compiled["results"], name


def _skip_without(modules: tuple[str, ...]) -> None:
    for module in modules:
        pytest.importorskip(module, reason=f"{module} is not installed: pip install -e '.[models]'")


@functools.cache
def _oracle(name: str) -> dict:
    """The program's own compile and shardscope.inspect of it (``ORACLE``), run once."""
    path = PROGRAMS / f"{name}.py"
    return json.loads(_run([sys.executable, "-c", ORACLE, str(path)]).strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "needs"), CASES, ids=[c[0] for c in CASES])
def test_every_route_gives_the_compilers_answer(name, needs, tmp_path):
    _skip_without(needs)
    path = PROGRAMS / f"{name}.py"
    both = _oracle(name)
    compiled = both["compiled"]
    # The program really is sharded and communicates: not a comparison of replicas.
    assert any("devices=" in s for s in compiled["args"]), name
    assert sum(compiled["collectives"].values()) >= 1, name

    _agrees(both["inspect"], compiled, f"{name} through shardscope.inspect")
    _agrees(_from_propagate_json(_cli("propagate", str(path), "--json")), compiled, f"{name} file")
    capture = tmp_path / f"capture-{name}.json"
    _run(
        [
            sys.executable,
            str(REPO / "main.py"),
            "capture",
            "--out",
            str(capture),
            "--",
            sys.executable,
            str(path),
        ]
    )
    _agrees(
        _from_propagate_json(_cli("propagate", str(capture), "--json")),
        compiled,
        f"{name} captured",
    )
    # The program file's route lists every argument and result the compiled program has.
    loaded = _cli("load", str(path), "--json")
    roles = Counter(v["role"] for v in loaded["values"])
    assert roles["arg"] == len(compiled["args"]), name
    # Every route names each argument alike: the user's path of it.
    names = _arg_names(loaded)
    assert _arg_names(_cli("load", str(capture), "--json")) == names, f"{name} captured"
    assert both["inspect"]["names"] == names, f"{name} through shardscope.inspect"
    # Inspection.value takes each of those names for its own argument.
    assert all(both["inspect"]["by_name"]), name
    _names_are_taken(path, capture, names, tmp_path)


def _arg_names(result: dict) -> list[str]:
    return [
        v["name"] for v in sorted(result["values"], key=lambda v: v["id"]) if v["role"] == "arg"
    ]


def _names_are_taken(path, capture, names: list[str], tmp_path) -> None:
    """A name every route shows (the last matrix argument: a kernel or weight) is taken by
    ``--spec`` on the program file and on the capture, and as a key of a program file's
    SPECS."""
    loaded = {v["name"]: v for v in _cli("load", str(path), "--json")["values"]}
    wanted = [n for n in names if len(loaded[n]["shape"]) == 2 and n not in ("x", "y")][-1]
    for source in (path, capture):
        result = _cli("propagate", str(source), "--spec", f"{wanted}=_,model", "--json")
        specs = {v["name"]: v["spec"] for v in result["values"] if v["role"] == "arg"}
        assert specs[wanted] == [[], ["model"]], f"{source}: {wanted}"
    keyed = tmp_path / f"keyed_{path.name}"
    keyed.write_text(
        path.read_text().replace('if __name__ == "__main__":', "if False:")
        + f"\nSPECS = {{{wanted!r}: P(None, 'model')}}\n"
    )
    assert _cli("load", str(keyed), "--json")["specs"] == {wanted: [None, "model"]}, wanted


@pytest.mark.slow
@pytest.mark.parametrize(("name", "needs"), CASES, ids=[c[0] for c in CASES])
def test_run_runs_the_program_as_it_compiles(name, needs):
    """``run FILE`` compiles the arguments and results the load lowered (the same names,
    in order), on the program's own specs: each argument and result sharded as the
    program's own compile shards it, the same collectives, every output checked against
    the unsharded reference."""
    _skip_without(needs)
    path = str(PROGRAMS / f"{name}.py")
    compiled = _oracle(name)["compiled"]
    loaded = _cli("load", path, "--json")
    ran = _cli("run", path, "--json")
    arg_names = [
        v["name"] for v in sorted(loaded["values"], key=lambda v: v["id"]) if v["role"] == "arg"
    ]
    assert [a["name"] for a in ran["arguments"]] == arg_names, name
    assert [a["hlo_sharding"] for a in ran["arguments"]] == compiled["args"], name
    assert [o["hlo_sharding"] for o in ran["outputs"]] == compiled["results"], name
    for output in ran["outputs"]:
        assert output["max_rel_error"] is not None, f"{name}: {output['name']}"
        assert output["max_rel_error"] < 1e-5, f"{name}: {output['name']}"
    kinds = Counter()
    for c in ran["collectives"]:
        kinds[c["kind"].replace("-", "_")] += max(c["operands"], 1)
    assert dict(kinds) == compiled["collectives"], name


@pytest.mark.slow
@pytest.mark.parametrize(("name", "needs"), CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_run_on_devices_runs_the_program_as_it_compiles(name, needs):
    """The window's Run on devices (``run_program`` on the loaded program) runs it as
    ``run`` does: the load's arguments, the compile's shardings and collectives."""
    _skip_without(needs)
    from shardscope.backend.program.load import load_program
    from shardscope.backend.run.dispatch import run_program

    compiled = _oracle(name)["compiled"]
    program = load_program(str(PROGRAMS / f"{name}.py"))
    ran = run_program(program, timeout=300)
    assert [a.name for a in ran.arguments] == program.arg_names, name
    assert [a.hlo_sharding for a in ran.arguments] == compiled["args"], name
    assert len(ran.outputs) == len(compiled["results"]), name
    assert all(o.max_rel_error is not None and o.max_rel_error < 1e-5 for o in ran.outputs)
    kinds = Counter()
    for c in ran.collectives:
        kinds[c.kind.replace("-", "_")] += max(c.operands, 1)
    assert dict(kinds) == compiled["collectives"], name


@pytest.mark.slow
def test_jaxs_names_of_nnx_variables_are_taken_on_the_command_line():
    _skip_without(("flax",))
    path = str(PROGRAMS / "nnx_split.py")
    by_name = {}
    for name in ("state['w1']['kernel'].value", "state['w1']['kernel']"):
        result = _cli("propagate", path, "--spec", f"{name}=_,model", "--json")
        by_name[name] = {v["name"]: v["spec"] for v in result["values"] if v["role"] == "arg"}
    assert by_name["state['w1']['kernel'].value"] == by_name["state['w1']['kernel']"]
    assert by_name["state['w1']['kernel']"]["state['w1']['kernel']"] == [[], ["model"]]
    # run places the SPECS the file keys by JAX's names on those arguments.
    ran = _cli("run", path, "--json")
    specs = {a["name"]: a["spec"] for a in ran["arguments"]}
    assert specs["state['w1']['kernel']"] == "_,model"
    assert specs["state['w2']['kernel']"] == "model,_"
    assert specs["x"] == "data,_"
    assert not ran["notes"]
