"""``python main.py propagate``: JSON shape, readable summary, clear errors."""

import json

import pytest

from shardscope.app.cli.main import main
from tests.support.inputs import CORPUS, INPUTS, PROGRAMS


@pytest.fixture(scope="module")
def conflict_json():
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["propagate", "example:conflict", "--json"]) == 0
    return json.loads(out.getvalue())


def test_json_has_every_section(conflict_json):
    data = conflict_json
    assert {"values", "steps", "conflicts", "collectives", "route"} <= set(data)
    values = {v["name"]: v for v in data["values"] if v["name"]}
    assert values["x"]["spec"] == [["data"], []] and values["x"]["role"] == "arg"
    assert values["y"]["hlo_sharding"].startswith("{devices=[2,1,4]")
    assert values["result[0]"]["role"] == "result"
    assert all(
        set(v) >= {"id", "name", "role", "shape", "dtype", "spec", "hlo_sharding"}
        for v in data["values"]
    )
    step = data["steps"][0]
    assert set(step) >= {"index", "op", "op_name", "axis", "source", "targets", "values"}
    conflict = data["conflicts"][0]
    assert conflict["op_name"] == "stablehlo.add" and conflict["rule"] == "longest common prefix"
    predicted = data["predicted_collectives"][0]
    assert set(predicted) >= {"op", "kind", "axes", "value", "bytes_per_device", "matched"}
    compiled = data["collectives"][0]
    assert set(compiled) >= {"kind", "device_groups", "axes", "shapes", "bytes", "operands"}
    assert set(compiled) >= {"tensors", "origin", "predicted", "line", "file"}
    assert data["memory"]["source"].startswith("XLA's CPU buffer assignment")
    assert data["memory"]["argument"] > 0


def test_mesh_and_spec_options_replace_the_programs(capsys):
    assert (
        main(["propagate", "example:conflict", "--mesh", "a=2,b=4", "--spec", "x=a,b", "--json"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    values = {v["name"]: v for v in data["values"] if v["name"]}
    assert values["x"]["spec"] == [["a"], ["b"]]
    assert values["result[0]"]["spec"] == [["a"], ["b"]]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--spec", "z=data,_"], "valid names: x, y, result[0]"),
        (["--spec", "x=rows,_"], "use one of data, model"),
        (["--spec", "x=data"], "rank 2"),
        (["--spec", "x"], "NAME=SPEC"),
    ],
)
def test_bad_specs_exit_non_zero_with_one_line(capsys, argv, message):
    assert main(["propagate", "example:conflict", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_summary_is_readable(capsys):
    assert main(["propagate", "example:conflict"]) == 0
    out = capsys.readouterr().out
    assert "conflicts: 1" in out and "longest common prefix" in out and "collectives:" in out


def test_unknown_axis_is_named_before_the_rank(capsys):
    assert main(["propagate", "example:conflict", "--spec", "x=foo"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "error: x: spec dim 0 uses unknown axis 'foo': use one of data, model"


def test_a_compiler_crash_does_not_kill_propagate():
    # Shardy segfaults on this module in some runs with debug-sharding-origins on; the
    # command must finish every time, and say when it ran without origins.
    import subprocess
    import sys

    from tests.support.inputs import MLIR, REPO

    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "main.py", "propagate", str(MLIR / "sdy_origins_crash.mlir")]
            + ["--mesh", "data=4,model=2", "--json"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert ("origins off" in data["route"]) == any("crashed" in w for w in data["warnings"])
        values = {v["name"]: v for v in data["values"] if v["name"]}
        assert values["x"]["spec"] == [["data"], []]


def test_a_mesh_without_the_programs_own_axes_is_one_line(capsys):
    from tests.support.inputs import PROGRAMS

    source = str(PROGRAMS / "own_mesh_axes.py")
    assert main(["propagate", source, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mesh"] == {"dp": 2, "tp": 2}
    assert main(["propagate", source, "--mesh", "dp=4,model=2"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: the program's own shardings use mesh axis tp, which the mesh dp=4, model=2 "
        "lacks; add it to the mesh (--mesh dp=4,model=2,tp=2, or the program's MESH)"
    )


def test_code_annotations_print_their_spec(capsys):
    assert main(["propagate", str(CORPUS / "shmap.py")]) == 0
    out = capsys.readouterr().out
    assert "(in code)" not in out
    assert "code sharding_constraint %4 = ?,?  [constraint_0]" in out
    assert main(["propagate", str(CORPUS / "shmap.py"), "--json"]) == 0
    annotations = json.loads(capsys.readouterr().out)["annotations"]
    code = [a for a in annotations if a["source"] == "code"]
    assert [a["spec"] for a in code] == ["data?,?", "?,?", "data?,?", "?,?", "?,?"]


def test_results_are_listed_by_index(capsys):
    assert main(["propagate", "example:transformer"]) == 0
    out = capsys.readouterr().out
    listing = out.split("arguments and results:")[1].split("steps:")[0]
    names = [line.split()[0] for line in listing.splitlines() if line.strip().startswith("result[")]
    assert names == [f"result[{i}]" for i in range(len(names))] and len(names) > 10


def test_a_mesh_replacing_the_programs_own_is_noted_on_stderr_not_in_the_json(capsys):
    assert main(["propagate", "example:mlp", "--mesh", "data=2,model=4", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["mesh"] == {"data": 2, "model": 4}
    assert captured.err.strip() == (
        "note: --mesh data=2,model=4 replaces the program's own mesh (data=4, model=2)"
    )
    assert main(["propagate", "example:mlp", "--mesh", "data=4,model=2", "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_spec_takes_the_ssa_name_the_window_shows(capsys):
    from shardscope.backend.program.load import load_program

    graph = load_program("example:mlp").graph
    value = next(v for v in graph.values if v.display_name.endswith(" %3"))
    assert main(["propagate", "example:mlp", "--spec", "%3=data,_", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    annotation = next(a for a in data["annotations"] if a["source"] == "user")
    assert annotation["value"] == value.id and annotation["target"] == value.display_name
    shown = next(v for v in data["values"] if v["id"] == value.id)
    assert shown["spec"][0] == ["data"]


def test_an_ssa_name_several_functions_share_is_an_error_naming_each(capsys):
    assert main(["propagate", "example:attention", "--spec", "%26=_,_"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: %26 names 2 values (") and "use one of those names" in err


def test_shard_map_specs_are_listed_and_explain_the_axes_they_bring(capsys):
    assert main(["propagate", str(CORPUS / "shmap.py"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    mine = {a["origin"]: a for a in data["annotations"] if a["origin"].startswith("mc_0_")}
    assert set(mine) == {"mc_0_input: 0", "mc_0_input: 1", "mc_0_output: 0"}
    assert mine["mc_0_input: 0"]["spec"] == "data?,?" and mine["mc_0_input: 0"]["source"] == "code"
    x = next(v for v in data["values"] if v["name"] == "x")
    assert mine["mc_0_input: 0"]["value"] == x["id"] and x["spec"][0] == ["data"]


def test_gspmd_lists_gspmds_compiled_collectives_beside_shardys(capsys, conflict_json):
    # GSPMD's collectives are held against jax.jit's own in tests/backend/gspmd.
    assert "gspmd_collectives" not in conflict_json
    assert main(["propagate", "example:conflict", "--gspmd", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    gspmd = data["gspmd_collectives"]
    assert gspmd and all(set(c) == set(conflict_json["collectives"][0]) for c in gspmd)
    assert all(t["op"] is not None and t["line"] for c in gspmd for t in c["tensors"])
    assert main(["propagate", "example:conflict", "--gspmd"]) == 0
    assert f"GSPMD's compiled collectives: {len(gspmd)}" in capsys.readouterr().out


def test_hardware_prices_the_compiled_collectives_for_that_profile(capsys, conflict_json):
    # Without --hardware: the default profile, the one the window and inspect() use.
    assert conflict_json["cost"]["hardware"] == "tpu-v5e"
    assert main(["propagate", "example:mlp", "--hardware", "h100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cost = data["cost"]
    assert cost["hardware"] == "h100" and cost["label"].startswith("NVIDIA H100")
    assert [c["kind"] for c in cost["collectives"]] == [c["kind"] for c in data["collectives"]]
    assert [c["bytes_per_device"] for c in cost["collectives"]] == [
        c["bytes"] for c in data["collectives"]
    ]
    assert {c["link"] for c in cost["collectives"]} == {"NVLink"}
    assert cost["memory"]["text"].startswith("fits in 80 GB")
    assert main(["propagate", "example:mlp", "--hardware", "h100"]) == 0
    out = capsys.readouterr().out
    assert "cost on NVIDIA H100" in out and "estimate per step:" in out and "memory: fits" in out


def test_an_unknown_hardware_is_one_line_naming_the_choices(capsys):
    assert main(["propagate", "example:mlp", "--hardware", "tpu-v9"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'tpu-v9'" in err
    assert all(name in err for name in ("tpu-v5e", "tpu-v5p", "tpu-v6e", "h100", "h200", "cpu"))


def test_summary_lists_compiled_collectives_with_their_cause_then_the_prediction(capsys):
    assert main(["propagate", "example:conflict"]) == 0
    out = capsys.readouterr().out
    compiled = out.split("(as XLA compiled them)", 1)[1].split("predicted collectives:", 1)[0]
    # Each compiled collective: its kind, axes, tensor, op and line, then its cause.
    assert compiled.count("\n  all-gather ") == 2 and "y for op 1 add line 9" in compiled
    assert compiled.count("    conflict: ") == 2
    predicted = out.split("predicted collectives:", 1)[1]
    assert "NOT compiled" in predicted


# -- every way in gives the same collectives -------------------------------------------
# One program reaches ``propagate`` as its file, through ``shardscope.inspect``, as a
# capture of a script that runs it, as the StableHLO file JAX exports of it
# (``lowered.as_text``, with and without locations), and as a saved session (the CLI
# opens no session: it is read back as the window reads it and propagated with its mesh
# and specs, as the window propagates).
ROUTE_PROGRAMS = {"shard_map FSDP": "compiled_fsdp.py", "conflict example": "example:conflict"}
_SCRIPT = """import json, sys, types
sys.path.insert(0, {repo!r})
import jax, jax.numpy as jnp
from tests.support.compile_oracle import jit_arguments
fn, args, mesh = jit_arguments(types.SimpleNamespace(**json.loads({fields!r})))
args = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype, device=s.sharding), args)
with jax.set_mesh(mesh):
    jax.jit(fn)(*args)
"""
NO_LOCATIONS = ".mlir without locations"


def _cli_json(*argv: str) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module", params=list(ROUTE_PROGRAMS))
def routes(request, tmp_path_factory):
    """``(program, {route: propagate --json's collectives})`` for one program."""
    import sys

    import shardscope
    from shardscope.backend.analysis.analyse import analyse
    from shardscope.backend.program.lower import load_python_namespace
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.saved_program import unpack_program
    from tests.support.compile_oracle import loaded, lowered
    from tests.support.inputs import PROGRAMS, REPO

    name = ROUTE_PROGRAMS[request.param]
    source = name if name.startswith("example:") else str(PROGRAMS / name)
    tmp = tmp_path_factory.mktemp("routes")
    program = loaded(source)
    out = {"program file": _cli_json("propagate", source, "--json")["collectives"]}

    ns = load_python_namespace(program.path, program.params)
    own = {} if program.kind == "python" else {"mesh": ns["MESH"], "in_shardings": ns["SPECS"]}
    api = shardscope.inspect(ns["PROGRAM"], *ns["EXAMPLE_ARGS"], **own)
    out["shardscope.inspect"] = api.to_json()["collectives"]

    fields = {k: getattr(program, k) for k in ("path", "params", "mesh", "specs", "arg_names")}
    script = tmp / "script.py"
    script.write_text(_SCRIPT.format(repo=str(REPO), fields=json.dumps(fields)))
    capture = tmp / "capture.json"
    _cli_json("capture", "--json", "--out", str(capture), "--", sys.executable, str(script))
    out["capture"] = _cli_json("propagate", str(capture), "--json")["collectives"]

    exported = lowered(program)
    for route, text, file in (
        (".mlir", exported.as_text(debug_info=True), "located.mlir"),
        (NO_LOCATIONS, exported.as_text(), "bare.mlir"),
    ):
        (tmp / file).write_text(text)
        out[route] = _cli_json("propagate", str(tmp / file), "--json")["collectives"]

    saved = Session()
    saved.set_program(program)
    saved.save(tmp / "session.json")
    state = Session.read(tmp / "session.json")
    reopened = Session()
    reopened.restore(state)
    reopened.set_program(unpack_program(state["program"], state["source"], "session.json"))
    assert reopened.program is not None
    result = analyse(reopened.program, reopened.mesh, reopened.specs_for_propagation())
    out["session"] = result.to_json()["collectives"]
    return program, out


def _moved(c: dict) -> tuple:
    """What a collective moves and between which devices (the fields every route has)."""
    return (c["kind"], c["operands"], c["shapes"], c["device_groups"], c["axes"])


def _told(c: dict) -> tuple:
    """All of ``propagate --json``'s account of a collective: what it moves, whether the
    user wrote it, and each operand's op and line."""
    tensors = [(t["op_name"], t["op"], t["file"], t["line"]) for t in c["tensors"]]
    return (*_moved(c), c["origin"], tensors)


@pytest.mark.slow
def test_every_route_gives_the_program_files_collectives(routes):
    _, by_route = routes
    expected = [_told(c) for c in by_route["program file"]]
    assert expected
    assert all(t[1] is not None and t[3] is not None for c in expected for t in c[-1])
    for route, collectives in by_route.items():
        if route != NO_LOCATIONS:
            assert [_told(c) for c in collectives] == expected, route


@pytest.mark.slow
def test_a_module_without_locations_moves_the_same_but_names_no_op(routes):
    # Without locations XLA names each instruction by itself (``dot.3``) and no line: the
    # ops, lines and so whether the user wrote it cannot be told, and are not.
    _, by_route = routes
    bare = by_route[NO_LOCATIONS]
    assert [_moved(c) for c in bare] == [_moved(c) for c in by_route["program file"]]
    for c in bare:
        assert c["origin"] == "" and all(
            t["op"] is None and t["line"] is None for t in c["tensors"]
        )


@pytest.mark.slow
def test_the_routes_collectives_are_jaxs_own_compile(routes):
    from shardscope.backend.hlo.hlo_collectives import read_collectives
    from tests.support.compile_oracle import lowered

    program, by_route = routes
    compiled = lowered(program).compile()
    assignment = [int(d.id) for d in compiled.runtime_executable().local_devices()]
    devices = len(assignment)
    expected = read_collectives(compiled.as_text(), assignment, devices)
    got = by_route["program file"]
    assert sorted(
        (c["kind"], c["operands"], c["shapes"], c["device_groups"]) for c in got
    ) == sorted((c["kind"], c["operands"], c["shapes"], c["groups"]) for c in expected)


@pytest.fixture(scope="module")
def reordered(tmp_path_factory):
    """example:mlp's module as a .mlir file and as a capture whose mesh lays devices out in
    ORDER, with jax.jit's own device groups on ORDER and on 0..7."""
    from tests.support.compile_oracle import loaded
    from tests.support.device_order import ORDER, jit_groups, module_text, write_capture

    program = loaded("example:mlp")
    text = module_text(program)
    folder = tmp_path_factory.mktemp("order")
    (folder / "mlp.mlir").write_text(text)
    return {
        "mlir": folder / "mlp.mlir",
        "capture": write_capture(folder / "cap.json", text, program.mesh),
        "groups": jit_groups(program, ORDER),
        "iota": jit_groups(program, range(8)),
    }


def _propagated(capsys, *argv) -> dict:
    assert main(["propagate", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _groups(data: dict) -> list:
    return [tuple(tuple(g) for g in c["device_groups"]) for c in data["collectives"]]


ORDER_TEXT = "0,2,4,6,1,3,5,7"


@pytest.mark.parametrize("kind", ["mlir", "capture"])
def test_a_device_order_gives_the_device_groups_jax_jit_compiles(capsys, reordered, kind):
    assert reordered["groups"] != reordered["iota"]  # the order changes the groups
    data = _propagated(
        capsys, reordered[kind], "--mesh", "data=4,model=2", "--device-order", ORDER_TEXT
    )
    assert data["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert _groups(data) == reordered["groups"]
    # Without the order the same module compiles as on devices 0..7 (a .mlir file has no
    # order of its own).
    if kind == "mlir":
        data = _propagated(capsys, reordered[kind])
        assert data["device_order"] == list(range(8))
        assert _groups(data) == reordered["iota"]


def test_a_capture_propagates_in_its_own_device_order(capsys, reordered):
    data = _propagated(capsys, reordered["capture"])
    assert data["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert _groups(data) == reordered["groups"]
    # The order applies to a --mesh of as many devices; a mesh of another size is 0, 1, 2...
    data = _propagated(capsys, reordered["capture"], "--mesh", "data=2,model=4")
    assert data["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
    data = _propagated(capsys, reordered["capture"], "--mesh", "data=2,model=2")
    assert data["device_order"] == [0, 1, 2, 3]
    # --device-order alone lays the program's own mesh out in it.
    data = _propagated(capsys, reordered["capture"], "--device-order", "0,1,2,3,4,5,6,7")
    assert (data["mesh"], data["device_order"]) == ({"data": 4, "model": 2}, list(range(8)))
    assert _groups(data) == reordered["iota"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device-order", "0,2,4,6"], "device order has 4 ids but the mesh has 8 devices"),
        (["--device-order", "0,2,4,6,1,3,5,5"], "device order repeats [5]: give a permutation"),
        (["--device-order", "0,2,x"], "--device-order '0,2,x' is not a list of integers"),
        (["--mesh", "data=8", "--device-order", "1,2"], "has 2 ids but the mesh has 8"),
        (["--mesh", "data=2", "--device-order", "1,2"], "is not 0..N-1"),
    ],
)
def test_a_bad_device_order_is_one_line_naming_the_fix(capsys, reordered, argv, message):
    assert main(["propagate", str(reordered["capture"]), *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


TORCH_CONFLICT = INPUTS / "torch" / "capture_conflict.json"


@pytest.fixture(scope="module")
def torch_conflict_json():
    """propagate --json on a torch_xla capture: sin(x) + y, x on data and y on model."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["propagate", f"{TORCH_CONFLICT}#sync1", "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.mark.slow
def test_a_torch_xla_capture_is_compared_with_gspmd_by_default(torch_conflict_json):
    data = torch_conflict_json
    assert data["framework"] == "torch_xla" and data["partitioner"] == "gspmd"
    assert data["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
    # GSPMD keeps the add on data where Shardy replicates it.
    (diff,) = data["gspmd_differences"]
    assert diff["display_name"] == "result[0]"
    assert diff["shardy"] == [[], []] and diff["gspmd"] == [["data"], []]
    assert diff["gspmd_torch_xla"] == '("data", None)'
    assert diff["gspmd_dtensor"] == "[Shard(0), Replicate()]"
    assert [c["kind"] for c in data["gspmd_collectives"]] == ["collective-permute"]
    # The collectives listed are torch_xla's own compile, and all the old keys stay.
    assert [c["kind"] for c in data["collectives"]] == ["collective-permute"]
    assert {"values", "steps", "conflicts", "predicted_collectives", "cost"} <= set(data)


@pytest.mark.slow
def test_a_torch_xla_summary_leads_with_gspmd_and_labels_shardys_view(capsys):
    assert main(["propagate", f"{TORCH_CONFLICT}#sync1"]) == 0
    text = capsys.readouterr().out
    gspmd = text.index("GSPMD's final shardings")
    shardy = text.index("== what Shardy does with the same annotations ==")
    assert gspmd < text.index("as torch_xla compiled them") < shardy < text.index("conflicts: 1")
    head = text[gspmd:shardy]
    # The differing result is marked, with GSPMD's spec in torch_xla's form and Shardy's.
    marked = next(line for line in head.splitlines() if line.startswith(" *"))
    assert "result[0]" in marked and '("data", None)' in marked
    assert "Shardy: [_, _] {replicated}" in head
    assert "x                        [16, 32]         [data, _]" in head


@pytest.mark.slow
def test_a_torch_xla_captures_weights_show_their_dtensor_placements(capsys):
    block = f"{INPUTS / 'torch' / 'capture_block.json'}#sync2"
    assert main(["propagate", block]) == 0
    text = capsys.readouterr().out
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  model.")}
    # train_block.py's marks on the (data=4, model=2) mesh, GSPMD's final shardings
    assert lines["model.up.weight"].endswith('("model", None)  [Replicate(), Shard(0)]')
    assert lines["model.down.weight"].endswith('(None, "model")  [Replicate(), Shard(1)]')
    assert main(["propagate", block, "--json"]) == 0
    values = {v["display_name"]: v for v in json.loads(capsys.readouterr().out)["values"]}
    weight = values["model.up.weight"]
    assert weight["spec"] == [["model"], []] and weight["torch_xla"] == '("model", None)'
    assert weight["dtensor"] == "[Replicate(), Shard(0)]"


@pytest.mark.slow
def test_a_jax_program_keeps_shardys_summary_without_gspmd(capsys):
    assert main(["propagate", "example:conflict"]) == 0
    text = capsys.readouterr().out
    assert "what Shardy does" not in text and "GSPMD differs" not in text
    assert '("data", None)' not in text and "Replicate()" not in text


# --hosts and --dcn: the compiled collectives that cross hosts, traffic within and across
# hosts, host warnings, and one-line errors.
HOSTS_SOURCE = str(PROGRAMS / "hosts_data_model.py")


def _hosts_json(*argv):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["propagate", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def mlp_blocks():
    # mlp: data=4, model=2; layer2's all-reduce over model, groups {0,1}, {2,3}, ...
    return _hosts_json("example:mlp", "--hosts", "2")


@pytest.fixture(scope="module")
def mlp_model_across():
    return _hosts_json("example:mlp", "--dcn", "model=2")


def test_hosts_mark_the_compiled_and_the_predicted_collectives(mlp_blocks, mlp_model_across):
    data = mlp_blocks
    assert data["hosts"] == 2 and data["device_order"] == list(range(8))
    (compiled,) = data["collectives"]
    assert compiled["axes"] == ["model"] and compiled["crosses_hosts"] is False
    assert all({d // 4 for d in g} in ({0}, {1}) for g in compiled["device_groups"])
    (predicted,) = data["predicted_collectives"]
    assert predicted["axes"] == ["model"] and predicted["crosses_hosts"] is False
    # data spans both links, but no collective runs over it: nothing warned.
    assert not any("spans both" in w for w in data["warnings"])
    cost = data["cost"]
    assert cost["hosts"] == 2 and cost["step_bytes_across_hosts"] == 0
    assert cost["collectives"][0]["link"] == "ICI"
    # model laid across hosts: the same all-reduce crosses, priced on DCN and warned.
    data = mlp_model_across
    assert data["device_order"] == [0, 4, 1, 5, 2, 6, 3, 7]
    (compiled,) = data["collectives"]
    assert compiled["crosses_hosts"] is True
    assert data["predicted_collectives"][0]["crosses_hosts"] is True
    cost = data["cost"]
    (priced,) = cost["collectives"]
    assert priced["link"] == "DCN" and priced["crosses_hosts"] is True
    assert priced["bytes_within_hosts"] + priced["bytes_across_hosts"] == compiled["bytes"] * 8
    assert cost["step_bytes_across_hosts"] == priced["bytes_across_hosts"] > 0
    assert "process_is_granule=True" in cost["estimate"]
    (warning,) = [w for w in data["warnings"] if w.startswith("all-reduce over model")]
    assert "--dcn data=2" in warning


def test_without_hosts_the_json_is_one_host(mlp_blocks):
    data = _hosts_json("example:mlp")
    assert data["hosts"] == 1 and data["cost"]["hosts"] == 1
    assert "crosses_hosts" not in data["predicted_collectives"][0]
    assert data["collectives"][0]["crosses_hosts"] is False
    assert data["cost"]["step_bytes_across_hosts"] == 0
    assert data["cost"]["collectives"][0]["seconds"] == (
        pytest.approx(mlp_blocks["cost"]["collectives"][0]["seconds"], rel=1e-12)
    )


def test_the_summary_shows_hosts_crossings_traffic_and_warnings(capsys):
    assert main(["propagate", HOSTS_SOURCE, "--hosts", "2"]) == 0
    out = capsys.readouterr().out
    assert "hosts: 2, 4 devices each (the layout of --dcn data=2)" in out
    assert "  host 1: devices 4..7" in out
    assert "  axis data (2): DCN (across hosts)" in out and "  axis model (4): ICI" in out
    (crossing,) = [line for line in out.splitlines() if "CROSSES HOSTS" in line]
    assert crossing.lstrip().startswith("all-reduce         data")
    assert "traffic per step on 2 hosts" in out and "across hosts: 512 B" in out
    assert "  crosses hosts: #1 all-reduce over data" in out
    warnings = out[out.index("\nwarnings:") :]
    assert "all-reduce over data (line 14" in warnings and "--dcn model=2" in warnings


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hosts", "3"], "give a host count that divides 8"),
        (["--dcn", "model=3"], "give a number of hosts that divides it"),
        (["--dcn", "batch=2"], "use one of data, model"),
        (["--hosts", "4", "--dcn", "model=2"], "or leave out --hosts"),
        (["--dcn", "model=2", "--device-order", "0,1,2,3,4,5,6,7"], "not both"),
        (["--mesh", "data=2,model=4", "--dcn", "rows=2"], "use one of data, model"),
    ],
)
def test_bad_hosts_or_dcn_is_one_line_naming_the_fix(capsys, argv, message):
    assert main(["propagate", HOSTS_SOURCE, *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_host_count_that_is_not_a_number_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["propagate", HOSTS_SOURCE, "--hosts", "two"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2
    assert "give e.g. --hosts 2" in err and len(err.splitlines()) == 1


def test_a_program_that_fails_to_load_with_a_mesh_ends_the_compile_started_for_it(capsys, tmp_path):
    # With --mesh the compile worker starts while the program loads; a load that fails
    # ends it: the error is the one line, and no compile is left waiting for a module.
    import threading
    import time

    bad = tmp_path / "bad.py"
    bad.write_text("x = (\n")
    assert main(["propagate", str(bad), "--mesh", "data=2", "--json"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "SyntaxError" in err
    deadline = time.monotonic() + 30
    while any(t.name == "xla-compile" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the compile started for --mesh still runs"
        time.sleep(0.05)


def test_a_result_that_returns_an_argument_or_a_value_again_is_listed_by_index(capsys):
    import runpy

    import jax
    from jax.sharding import NamedSharding

    path = PROGRAMS / "returns_argument.py"
    ns = runpy.run_path(str(path))
    mesh = jax.make_mesh((4,), ("data",), devices=jax.devices()[:4])
    x, y = ns["EXAMPLE_ARGS"]
    x = jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=NamedSharding(mesh, ns["SPECS"]["x"]))
    compiled = jax.jit(ns["PROGRAM"]).lower(x, y).compile()
    want = [str(s._to_xla_hlo_sharding(2)) for s in compiled.output_shardings]
    assert main(["propagate", str(path)]) == 0
    listing = capsys.readouterr().out.split("arguments and results:")[1].split("steps:")[0]
    rows = {line.split()[0]: line.split()[-1] for line in listing.splitlines() if line.strip()}
    assert list(rows) == ["x", "y", "result[0]", "result[1]", "result[2]"]
    assert [rows[f"result[{i}]"] for i in range(3)] == want
    assert main(["propagate", str(path), "--json"]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    results = {v["name"]: v for v in values if v["role"] == "result"}
    assert [results[f"result[{i}]"]["hlo_sharding"] for i in range(3)] == want
    assert results["result[0]"]["id"] == next(v["id"] for v in values if v["name"] == "x")
