"""torch_xla captures read from what the hook left (the checked-in fixtures of
tests/inputs/torch/tiny.py, made by make_fixtures.py with torch_xla 2.9): names, mesh,
device order, the sync's line, and torch_xla's own collectives, with no torch here."""

import collections
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.program.capture_file import Capture, parse_capture
from shardscope.backend.program.load import load_program
from shardscope.backend.program.torch_capture import (
    as_positions,
    collect_torch,
    name_arguments,
    torch_record,
)
from tests.support.torch_scripts import TORCH_PYTHON, cli, needs_torch

FIXTURE = Path("tests/inputs/torch/tiny_capture")
TINY = Path("tests/inputs/torch/tiny.py").resolve()


def _is_tiny(file: str | None) -> bool:
    """Whether ``file`` is tiny.py, named as the checkout that made the fixtures named it."""
    return bool(file) and file.endswith("tests/inputs/torch/tiny.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("torch") / "capture"
    shutil.copytree(FIXTURE, folder)
    capture = Capture(["python", "tiny.py"], 4, "finished")
    assert collect_torch(folder, capture, timeout=120)
    return capture


@pytest.fixture(scope="module")
def tiny_file(tiny, tmp_path_factory):
    path = tmp_path_factory.mktemp("file") / "capture-tiny.json"
    path.write_text(json.dumps(tiny.to_json()))
    return path


def test_the_sync_becomes_one_graph_on_the_scripts_mesh_in_its_device_order(tiny):
    assert tiny.framework == "torch_xla"
    (graph,) = tiny.functions
    assert graph.name == "sync1" and graph.module.startswith("SyncTensorsGraph.")
    assert graph.mesh == {"data": 2, "model": 2}
    assert graph.device_order == [0, 2, 1, 3]
    assert graph.partitioner == "gspmd"
    lines = TINY.read_text().splitlines()
    assert Path(graph.file).name == "tiny.py" and lines[graph.line - 1] == "torch_xla.sync()"
    assert graph.calls == 1
    assert graph.compiled_hlo.startswith(f"HloModule {graph.module},")


def test_the_graphs_inputs_are_named_as_the_script_names_them(tiny_file):
    program = load_program(f"{tiny_file}#sync1")
    assert not [n for n in program.arg_names if re.fullmatch(r"arg\d+", n)]
    named = [n for n in program.arg_names if not n.startswith("const ")]
    assert sorted(named) == sorted(
        ["model.up.weight", "model.up.bias", "model.down.weight", "model.down.bias", "batch"]
    )
    # SGD's learning rate, a scalar torch_xla put on the device, named by its value
    assert "const -0.1" in program.arg_names
    assert program.framework == "torch_xla" and program.device_order == (0, 2, 1, 3)


def test_each_marked_input_keeps_the_spec_the_script_gave_it(tiny_file):
    program = load_program(f"{tiny_file}#sync1")
    result = analyse(program, timeout=120)
    assert result.value("model.up.weight").spec == [["model"], []]
    assert result.value("model.down.weight").spec == [[], ["model"]]
    assert result.value("batch").spec == [["data"], []]


def _counted_in(text: str) -> collections.Counter:
    """(kind, operand count) of each collective instruction of an HLO text, read here
    with a pattern of its own."""
    found = collections.Counter()
    pattern = re.compile(
        r"\s(all-reduce|all-gather|all-to-all|collective-permute|reduce-scatter)"
        r"(?:-start)?\(([^)]*)\)"
    )
    for line in text.splitlines():
        m = pattern.search(line)
        if m and " = " in line:
            found[m[1], len(re.findall(r"%[\w.\-]+", m[2]))] += 1
    return found


def test_the_collectives_are_torch_xlas_own_compiled_ones(tiny_file):
    program = load_program(f"{tiny_file}#sync1")
    result = analyse(program, timeout=120)
    listed = collections.Counter((c.kind, c.operands) for c in result.compiled_collectives)
    assert listed == _counted_in(program.compiled_hlo) and listed
    assert any("torch_xla's own compile" in w for w in result.warnings)
    assert result.compiled_by == "torch_xla" and result.partitioner == "gspmd"
    # each on the script's line its first operand's op came from; a gradient's op has
    # none (autograd runs it where the call stack is torch's only), never torch's own
    forward = [c for c in result.compiled_collectives if "backward/" not in c.tensors[0].op_name]
    assert forward and all(_is_tiny(c.file) and c.line for c in forward)
    assert all(not c.file or _is_tiny(c.file) for c in result.compiled_collectives)
    # torch_xla's device ids, over the script's mesh axes
    assert all(c.axes for c in result.compiled_collectives if c.kind != "collective-permute")


def test_the_recorded_marks_name_the_tensor_as_the_call_writes_it():
    record = torch_record(FIXTURE)
    marks = {m["tensor"]: m["spec"] for m in record["marks"]}
    assert marks == {
        "model.up.weight": ["model", None],
        "model.down.weight": [None, "model"],
        "batch": ["data", None],
    }
    (mesh,) = record["meshes"]
    assert mesh["device_ids"] == [0, 2, 1, 3] and Path(mesh["file"]).name == "tiny.py"


def test_a_capture_file_of_a_torch_graph_reads_back_with_its_fields(tiny):
    again = parse_capture(json.dumps(tiny.to_json()), "cap.json")
    assert again.framework == "torch_xla"
    assert again.functions[0].device_order == [0, 2, 1, 3]
    assert again.functions[0].compiled_hlo == tiny.functions[0].compiled_hlo


def test_a_bad_device_order_in_a_capture_file_is_one_line_naming_the_fix(tiny):
    data = tiny.to_json()
    data["functions"][0]["device_order"] = [0, 0, 1, 3]
    with pytest.raises(Exception, match="device order that is not a permutation") as info:
        parse_capture(json.dumps(data), "cap.json")
    assert "\n" not in str(info.value) and "capture the script again" in str(info.value)


def test_device_ids_become_positions_in_the_mesh_order():
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    text = (
        'mhlo.sharding = "{devices=[4,1,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}" '
        'mhlo.sharding = "{devices=[2,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}" '
        'mhlo.sharding = "{devices=[8]<=[8]}" mhlo.sharding = "{replicated}"'
    )
    out = as_positions(text, order)
    assert "devices=[4,1,1,2]0,1,2,3,4,5,6,7 last" in out
    # tile 0 holds devices 0,1,4,5: positions 0,4,2,6
    assert "devices=[2,4]0,4,2,6,1,5,3,7 last" in out
    assert "devices=[8]0,4,1,5,2,6,3,7}" in out and "{replicated}" in out


def test_arguments_are_relocated_by_name_and_the_rest_of_the_text_is_kept():
    text = (
        "module {\n"
        '  func.func @main(%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}"} '
        'loc("xla__device_data"(#loc1)), %arg1: tensor<f32> loc(#loc2)) -> tensor<2xf32> {\n'
        "    return %arg0 : tensor<2xf32>\n  }\n}\n"
    )
    out = name_arguments(text, ["model.w", 'a "b"'])
    assert (
        '%arg0: tensor<2xf32> {mhlo.sharding = "{replicated}"} loc("model.w"), '
        '%arg1: tensor<f32> loc("a \\"b\\"")) -> tensor<2xf32> {' in out
    )
    assert (
        out.replace('loc("model.w")', 'loc("xla__device_data"(#loc1))').replace(
            'loc("a \\"b\\"")', "loc(#loc2)"
        )
        == text
    )


def test_a_script_that_never_imported_torch_xla_is_not_a_torch_capture(tmp_path):
    assert not collect_torch(tmp_path, Capture(["python"], 8, "finished"), timeout=60)


# --- end to end, with torch_xla: the user's interpreter runs the user's script -----------

TRAIN_BLOCK = Path("tests/inputs/torch/train_block.py").resolve()
PARAMETERS = [
    f"model.{m}.{p}"
    for m in ("up", "down", "block.ln", "block.qkv", "block.proj")
    for p in ("weight", "bias")
]


@pytest.fixture(scope="module")
def block_capture(tmp_path_factory):
    folder = tmp_path_factory.mktemp("block")
    # the user's own sitecustomize keeps running under the capture's
    own = folder / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text(f"open({str(folder / 'own-ran')!r}, 'w').write('yes')\n")
    out = folder / "capture-block.json"
    env_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(own)
    try:
        summary = json.loads(
            cli("capture", "--json", "--out", str(out), "--", TORCH_PYTHON, str(TRAIN_BLOCK))
        )
    finally:
        if env_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = env_path
    return folder, out, summary


@needs_torch
@pytest.mark.slow
def test_a_torch_xla_training_script_is_captured_unmodified(block_capture):
    folder, out, summary = block_capture
    assert (folder / "own-ran").read_text() == "yes"
    # no mode was active and the hook did all it does: nothing to warn of
    assert summary["warnings"] == []
    graphs = {f["name"]: f for f in summary["functions"]}
    # step 0 builds the optimizer's state, steps 1 and 2 run one graph
    assert set(graphs) == {"sync1", "sync2"} and graphs["sync2"]["calls"] == 2
    for graph in graphs.values():
        assert graph["mesh"] == {"data": 4, "model": 2}
        assert graph["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
        assert graph["partitioner"] == "gspmd" and Path(graph["file"]).name == "train_block.py"
    for name in ("sync1", "sync2"):
        program = load_program(f"{out}#{name}")
        names = set(program.arg_names)
        assert set(PARAMETERS) <= names, set(PARAMETERS) - names
        assert {"tokens", "target"} <= names
    state = [n for n in load_program(f"{out}#sync2").arg_names if n.startswith("opt.state[")]
    assert len(state) == 2 * len(PARAMETERS)


@needs_torch
@pytest.mark.slow
def test_the_captured_collectives_are_torch_xlas_and_gspmd_is_compared(block_capture):
    from shardscope.backend.sharding.hlo_text import spec_from_hlo_sharding
    from shardscope.backend.sharding.mesh import Mesh

    _, out, _ = block_capture
    data = json.loads(cli("propagate", "--json", "--gspmd", f"{out}#sync2"))
    program = load_program(f"{out}#sync2")
    listed = collections.Counter((c["kind"], c["operands"]) for c in data["collectives"])
    assert listed == _counted_in(program.compiled_hlo)
    assert all(
        c["tensors"] and all(t["op"] is not None for t in c["tensors"]) for c in data["collectives"]
    )
    # GSPMD's final shardings of the arguments: torch_xla's compiled module's parameters
    mesh = Mesh.from_dict(program.mesh)
    mesh = Mesh(mesh.axes, program.device_order)
    entry = program.compiled_hlo.split("\nENTRY ", 1)[1]
    compiled = {
        int(m[2]): spec_from_hlo_sharding(
            m[3], mesh, len(m[1].split(",")) if m[1] else 0, physical=True
        )
        for m in re.finditer(r"\[([\d,]*)\][^\n]*? parameter\((\d+)\), sharding=(\{[^}]*\})", entry)
    }
    args = [v for v in data["values"] if v["role"] == "arg"]
    differ = {d["id"]: d for d in data["gspmd_differences"]}
    gspmd = {
        i: (differ[v["id"]]["gspmd"] if v["id"] in differ else v["spec"])
        for i, v in enumerate(args)
    }
    assert compiled and all(
        [list(d.axes) for d in compiled[i].dims] == gspmd[i] for i in compiled
    ), {i: (compiled[i].format(), gspmd[i]) for i in compiled}


def test_ops_are_scoped_by_the_module_that_ran_them_not_one_scope_per_op(tiny_file):
    program = load_program(f"{tiny_file}#sync1")
    scopes = {
        op.location_name.rsplit("/", 1)[0]
        for op in program.graph.ops
        if op.location_name and "/" in op.location_name
    }
    assert {"up", "down", "backward/up", "backward/down", "optimizer"} <= scopes
    assert not [s for s in scopes if re.search(r"__\w+\.\d+$", s)], scopes
    # the user's lines, past torch's and the hook's own frames
    lines = {op.source_line for op in program.graph.ops if _is_tiny(op.source_file)}
    text = TINY.read_text().splitlines()
    assert any("self.down(torch.relu(self.up(x)))" in text[n - 1] for n in lines)


@needs_torch
@pytest.mark.slow
def test_steps_stops_a_torch_xla_script_after_that_many_syncs(tmp_path):
    out = tmp_path / "one.json"
    summary = json.loads(
        cli(
            "capture",
            "--json",
            "--steps",
            "1",
            "--out",
            str(out),
            "--",
            TORCH_PYTHON,
            str(TRAIN_BLOCK),
        )
    )
    assert summary["ended"] == "stopped after --steps"
    assert [f["name"] for f in summary["functions"]] == ["sync1"]


def test_the_hooks_record_says_what_may_have_changed_a_graph():
    from shardscope.backend.program.torch_capture import hook_warnings

    record = {
        "syncs": [{"modes": ["Logging"]}, {}, {"modes": ["Logging", "Other"]}],
        "errors": ["scopes: RuntimeError: no scope_pusher"],
    }
    warnings = hook_warnings(record)
    assert len(warnings) == 2
    assert "(Logging, Other)" in warnings[0] and "with it, not without" in warnings[0]
    assert warnings[1].endswith("scopes: RuntimeError: no scope_pusher")
    assert hook_warnings({"syncs": [{}], "errors": []}) == []


DTENSOR_STEP = Path("tests/inputs/torch/dtensor_step.py").resolve()


@needs_torch
@pytest.mark.slow
def test_a_script_that_syncs_under_its_own_dispatch_mode_is_told_so(tmp_path):
    script = Path("tests/inputs/torch/dispatch_mode.py").resolve()
    out = tmp_path / "modes.json"
    summary = json.loads(
        cli("capture", "--json", "--out", str(out), "--", TORCH_PYTHON, str(script))
    )
    assert any(
        "dispatch or function mode was active at a sync (Logging)" in w for w in summary["warnings"]
    )


@needs_torch
@pytest.mark.slow
def test_a_dtensor_scripts_placements_are_the_captured_weights_specs(tmp_path):
    out = tmp_path / "dtensor.json"
    summary = json.loads(
        cli("capture", "--json", "--out", str(out), "--", TORCH_PYTHON, str(DTENSOR_STEP))
    )
    (graph,) = summary["functions"]
    # DeviceMesh("xla", torch.arange(8).reshape(4, 2), mesh_dim_names=("data", "model"))
    assert graph["mesh"] == {"data": 4, "model": 2} and graph["partitioner"] == "gspmd"
    data = json.loads(cli("propagate", "--json", f"{out}#sync1"))
    values = {v["display_name"]: v for v in data["values"] if v["role"] == "arg"}
    # the placements dtensor_step.py gives, one per mesh dim (data, model)
    given = {
        "model.up.weight": ("[Replicate(), Shard(0)]", [["model"], []]),
        "model.down.weight": ("[Replicate(), Shard(1)]", [[], ["model"]]),
        "model.head.weight": ("[Shard(1), Shard(0)]", [["model"], ["data"]]),
        "batch": ("[Shard(0), Replicate()]", [["data"], []]),
    }
    found = {name: (values[name]["dtensor"], values[name]["spec"]) for name in given}
    assert found == given
    assert values["model.up.bias"]["dtensor"] == "[Replicate(), Replicate()]"


def test_each_later_sync_is_counted_for_the_latest_graph_compiled_on_its_inputs():
    from shardscope.backend.program.torch_capture import _calls

    inputs = [{"name": "model.w", "shape": [4, 4]}, {"name": "ids", "shape": [8]}]
    other = [{"name": "x", "shape": [2]}]
    syncs = [
        {"index": 0, "inputs": inputs, "dumps": ["first.pb"]},  # step 0: no grads yet
        {"index": 1, "inputs": inputs, "dumps": ["second.pb"]},  # step 1 compiles again
        {"index": 2, "inputs": inputs, "dumps": []},
        {"index": 3, "inputs": other, "dumps": ["eval.pb"]},
        {"index": 4, "inputs": inputs, "dumps": []},
    ]
    assert [_calls(s, syncs) for s in syncs if s["dumps"]] == [1, 3, 1]
