"""``python main.py run``: the JSON keys the issue lists, the readable report, one-line errors."""

import contextlib
import io
import json
import subprocess
import sys

import pytest

from shardscope.app.cli.main import main
from tests.support.inputs import INPUTS, REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mlp_json():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", "example:mlp", "--json", "--runs", "2"]) == 0
    return json.loads(out.getvalue())


def test_json_keys(mlp_json):
    data = mlp_json
    assert list(data)[:3] == ["program", "platform", "device_count"]
    assert {
        "platform",
        "device_count",
        "outputs",
        "arguments",
        "collectives",
        "warnings",
        "compile_s",
        "run_s",
        "memory",
    } <= set(data)
    assert data["platform"] == "cpu" and data["device_count"] == 8
    for tensor in data["outputs"] + data["arguments"]:
        assert {"name", "shape", "spec", "shards", "max_rel_error"} <= set(tensor)
        for shard in tensor["shards"]:
            assert {"device", "index", "checksum"} <= set(shard)
            assert "values" not in shard
    (c,) = data["collectives"]
    assert {"kind", "device_groups", "shape", "bytes", "source", "line", "predicted"} <= set(c)
    assert c["kind"] == "all-reduce" and c["device_groups"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert c["predicted"][0]["kind"] == "all-reduce"
    assert data["outputs"][0]["shards"][2]["index"] == [[8, 16], [0, 16]]


def test_mesh_and_spec_options(capsys):
    assert (
        main(
            [
                "run",
                "example:conflict",
                "--mesh",
                "data=2",
                "--spec",
                "x=data,_",
                "--spec",
                "y=_,data",
                "--json",
                "--runs",
                "1",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["device_count"] == 2
    assert {a["name"]: a["spec"] for a in data["arguments"]} == {"x": "data,_", "y": "_,data"}


def test_readable_report(capsys):
    assert main(["run", "example:matmul6", "--runs", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("matmul6: ran on 8 CPU devices (mesh data=4, model=2)")
    assert "compiled collectives: 5" in text
    assert "NOT PREDICTED" in text and "predicted but not compiled: 3" in text
    assert "device   7 [0:64, 0:32]" in text


def _cli(*argv):
    return subprocess.run(
        [sys.executable, "main.py", *argv], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_errors_are_one_line():
    done = _cli("run", "example:mlp", "--mesh", "data=16,model=8")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "needs 128 devices" in done.stderr
    done = _cli("run", str(INPUTS / "hostile" / "run_raises.py"))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "the run failed: ValueError" in done.stderr


def test_runs_must_be_a_count():
    done = _cli("run", "example:mlp", "--runs", "0")
    assert done.returncode == 2 and "number of runs" in done.stderr


def test_the_json_says_where_the_time_went(mlp_json):
    stages = mlp_json["stages"]
    assert {"worker_start_and_imports", "lower", "propagate", "compile", "run"} <= set(stages)
    assert stages["compile"] == pytest.approx(mlp_json["compile_s"], abs=0.05)


def test_a_crash_or_an_error_while_loading_is_one_line():
    path = INPUTS / "hostile" / "kills_itself.py"
    done = _cli("run", str(path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: {path}: the worker loading this program was killed")
    done = _cli("run", str(INPUTS / "hostile" / "raises.py"))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "fix the program and load it again" in done.stderr


def test_a_mesh_that_replaces_the_programs_is_noted_on_stderr():
    done = _cli("run", "example:conflict", "--mesh", "data=2,model=2", "--json", "--runs", "1")
    assert done.returncode == 0
    assert json.loads(done.stdout)["device_count"] == 4
    assert done.stderr == (
        "note: --mesh data=2,model=2 replaces the program's own mesh (data=4, model=2)\n"
    )


@pytest.mark.parametrize("runs", [1, 2])
def test_prng_key_arguments_and_results_run_and_compare_by_their_key_data(tmp_path, runs):
    import os

    import jax
    import numpy as np

    from shardscope.backend.run.shards import checksum

    env = {**os.environ, "SHARDSCOPE_CACHE_DIR": str(tmp_path)}
    argv = [sys.executable, "main.py", "run", str(INPUTS / "programs" / "run_keys.py")]
    for _ in range(runs):  # the second run reads the reference's outputs kept by the first
        done = subprocess.run(
            [*argv, "--json", "--runs", "1"], cwd=REPO, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reference_kept"] == (runs == 2) and data["notes"] == []
    outputs = {t["name"]: t for t in data["outputs"]}
    arguments = {t["name"]: t for t in data["arguments"]}
    assert [outputs[f"result[{i}]"]["dtype"] for i in range(3)] == [
        "float32",
        "key<fry>",
        "key<fry>",
    ]
    # every output checked against the unsharded run, keys word for word
    assert [t["max_rel_error"] for t in data["outputs"]] == [0.0, 0.0, 0.0]
    key = arguments["key"]
    assert key["dtype"] == "key<fry>" and key["shape"] == []
    given = checksum(np.asarray(jax.random.key_data(jax.random.key(7))))
    assert {s["checksum"] for s in key["shards"]} == {given}
    keys = arguments["keys"]
    assert keys["spec"] == "data" and [s["shape"] for s in keys["shards"]] == [[2]] * 4
    # the keys returned as they came: the same pieces on the same devices
    assert [s["checksum"] for s in outputs["result[2]"]["shards"]] == [
        s["checksum"] for s in keys["shards"]
    ]
    assert len({s["checksum"] for s in keys["shards"]}) == 4


def _run_json(path, tmp_path):
    import os

    env = {**os.environ, "SHARDSCOPE_CACHE_DIR": "off"}
    done = subprocess.run(
        [sys.executable, "main.py", "run", str(path), "--json", "--runs", "1"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_mesh_the_program_builds_from_its_devices_gets_every_outputs_error(tmp_path):
    data = _run_json(INPUTS / "programs" / "run_devices_mesh.py", tmp_path)
    assert data["device_count"] == 8 and data["notes"] == []
    errors = [t["max_rel_error"] for t in data["outputs"]]
    assert len(errors) == 2 and all(e is not None and e < 1e-5 for e in errors)


def test_a_mesh_pinned_to_more_devices_than_one_still_gets_every_outputs_error(tmp_path):
    # The reference is the run's own module without its shardings, on one device.
    data = _run_json(INPUTS / "programs" / "run_pinned_mesh.py", tmp_path)
    assert data["device_count"] == 4 and data["notes"] == []
    errors = [t["max_rel_error"] for t in data["outputs"]]
    assert len(errors) == 2 and all(e is not None and e < 1e-5 for e in errors)


def test_collectives_in_loops_checkpoints_nested_jits_and_combined_are_all_predicted():
    done = _cli(
        "run", str(INPUTS / "programs" / "run_collectives_nested.py"), "--json", "--runs", "1"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    collectives = data["collectives"]
    sources = [c["source"] for c in collectives]
    assert any("/while/body/" in s and "checkpoint/jit(inner)" in s for s in sources)
    assert any("/while/body/" in s and "checkpoint" not in s for s in sources)
    assert any(c["operands"] >= 3 for c in collectives)  # the gradients' combined all-reduce
    # every operand of every compiled collective has its prediction, and none is left over
    assert [len(c["predicted"]) for c in collectives] == [c["operands"] for c in collectives]
    assert data["predicted_only"] == []
    for c in collectives:
        for p in c["predicted"]:
            assert p["kind"] == c["kind"] and p["axes"] == ["data"]
            assert c["source"].endswith(p["source"]) or "(" in c["source"]


def test_an_argument_the_program_never_reads_is_taken_and_left_out_of_the_report(tmp_path):
    data = _run_json(INPUTS / "programs" / "run_unused_arg.py", tmp_path)
    assert [a["name"] for a in data["arguments"]] == ["params['w']", "x"]
    assert [a["spec"] for a in data["arguments"]] == ["_,model", "data,_"]
    errors = [o["max_rel_error"] for o in data["outputs"]]
    assert len(errors) == 2 and all(e is not None and e < 1e-6 for e in errors)
    assert data["notes"] == []


def test_run_prices_its_collectives_and_says_estimate(mlp_json, capsys):
    cost = mlp_json["cost"]
    assert cost["hardware"] == "tpu-v5e" and cost["estimate"].startswith("estimate")
    assert [c["bytes_per_device"] for c in cost["collectives"]] == [
        c["bytes"] for c in mlp_json["collectives"]
    ]
    # On this machine's CPU there is no accelerator time to set beside the estimate.
    assert mlp_json["platform"] == "cpu" and cost["measured"] is None
    assert main(["run", "example:mlp", "--runs", "1", "--hardware", "tpu-v6e"]) == 0
    assert "cost on Google Cloud TPU v6e" in capsys.readouterr().out
    assert main(["run", "example:mlp", "--hardware", "nope"]) == 1
    assert "choose one of" in capsys.readouterr().err


@pytest.mark.parametrize("mesh", [[], ["--mesh", "data=4,model=2"]])
def test_a_device_order_puts_each_shard_on_the_device_jax_places_it_on(mesh):
    from tests.support.compile_oracle import loaded
    from tests.support.device_order import ORDER, jit_groups, placement

    done = _cli(
        "run", "example:mlp", *mesh, "--device-order", "0,2,4,6,1,3,5,7", "--json", "--runs", "1"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["mesh"], data["device_order"]) == ({"data": 4, "model": 2}, list(ORDER))
    moved = 0
    for t in data["arguments"] + data["outputs"]:
        dims = [d.split("+") if d != "_" else [] for d in t["spec"].split(",")] if t["spec"] else []
        expected = placement(t["shape"], dims, ORDER)
        assert {s["device"]: s["index"] for s in t["shards"]} == expected, t["name"]
        moved += expected != placement(t["shape"], dims, range(8))
        assert t["max_rel_error"] is not None and t["max_rel_error"] < 1e-5
    assert moved  # some shard sits elsewhere than on devices 0..7 in order
    # The compiled collectives' groups are device ids in that order, as jax.jit's.
    groups = [tuple(tuple(g) for g in c["device_groups"]) for c in data["collectives"]]
    assert groups == jit_groups(loaded("example:mlp"), ORDER)


def test_an_mlir_module_runs_on_seeded_inputs_in_its_device_order(capsys):
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    argv = ["run", str(INPUTS / "mlir" / "sdy.mlir"), "--runs", "1", "--json"]
    assert main([*argv, "--device-order", ",".join(map(str, order))]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["inputs"] == "seeded" and data["device_order"] == order
    assert data["notes"][0].startswith("the inputs are seeded, not the program's own")
    x = next(t for t in data["arguments"] if t["name"] == "x")
    # x is split over data in its rows: device 1 sits at mesh position 4, data index 2.
    rows = {s["device"]: s["index"][0] for s in x["shards"]}
    assert rows[1] == [8, 12] and rows[2] == [0, 4]
    (reduce,) = data["collectives"]
    assert reduce["kind"] == "all-reduce" and reduce["predicted"], "Shardy predicted it"
    assert main(argv[:-1]) == 0
    assert "inputs: seeded random data, not the script's" in capsys.readouterr().out


def test_run_on_two_hosts_says_which_host_holds_each_shard_and_what_crosses_hosts():
    program = str(INPUTS / "hosts" / "two_axes.py")
    done = _cli("run", program, "--hosts", "2", "--json", "--runs", "1", "--no-reference")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["hosts"] == 2 and data["device_count"] == 8
    for tensor in data["outputs"] + data["arguments"]:
        assert [s["host"] for s in tensor["shards"]] == [s["device"] // 4 for s in tensor["shards"]]
    crossing = {
        tuple(map(tuple, c["device_groups"])): c["crosses_hosts"] for c in data["collectives"]
    }
    # data spans the hosts (device 0 on host 0, device 4 on host 1); model stays in each.
    assert crossing == {((0, 1, 2, 3), (4, 5, 6, 7)): False, ((0, 4), (1, 5), (2, 6), (3, 7)): True}
    # The cost prices the crossing all-reduce on DCN and the other on ICI, as propagate does.
    links = {
        c["crosses_hosts"]: cost["link"]
        for c, cost in zip(data["collectives"], data["cost"]["collectives"], strict=True)
    }
    assert links == {False: "ICI", True: "DCN"}
    assert data["cost"]["hosts"] == 2 and data["cost"]["step_bytes_across_hosts"] > 0
    text = _cli("run", program, "--hosts", "2", "--runs", "1", "--no-reference")
    assert text.returncode == 0, text.stderr
    assert (
        "hosts: 2 processes on JAX's distributed runtime (host 0: devices 0-3; host 1: "
        "devices 4-7)" in text.stdout
    )
    assert "collectives crossing hosts: 1 of 2" in text.stdout
    assert text.stdout.count("CROSSES HOSTS") == 1
    assert "device   4 host 1 [8:16, 0:8]" in text.stdout
    assert "traffic per step on 2 hosts" in text.stdout


def test_hosts_that_do_not_divide_the_mesh_or_a_module_on_hosts_are_one_line():
    done = _cli("run", "example:mlp", "--hosts", "3")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "error: the mesh's 8 devices do not split evenly among 3 hosts: give a host count "
        "that divides 8\n"
    )
    done = _cli("run", str(INPUTS / "mlir" / "gspmd.mlir"), "--hosts", "2")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "--hosts runs a Python program" in done.stderr


def _cli_json(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    "source", [str(INPUTS / "programs" / "compiled_fsdp.py"), "example:conflict"]
)
def test_run_json_collectives_are_in_propagates_form(source):
    from tests.support.compile_oracle import compiled_text, loaded

    ran = _cli_json(["run", source, "--json", "--runs", "1", "--no-reference"])
    propagated = _cli_json(["propagate", source, "--json"])
    collectives = ran["collectives"]
    # The compile jax itself makes has the same collectives, kind by kind.
    text = compiled_text(loaded(source))
    kinds = sorted(c["kind"] for c in collectives)
    assert len(kinds) >= 2
    assert kinds == sorted(k for k in set(kinds) for _ in range(text.count(f" {k}(")))
    # Each with its mesh axes, who wrote it and why it is there, as propagate says them.
    assert all(c["axes"] and c["origin"] and c["cause"]["text"] for c in collectives)
    assert collectives == propagated["collectives"]
    assert ran["cost"]["collectives"] == propagated["cost"]["collectives"]


def test_a_shard_whose_tile_holds_padding_says_so_in_the_text_and_the_json(capsys):
    argv = ["run", str(INPUTS / "mlir" / "uneven.mlir"), "--mesh", "data=2,model=4", "--runs", "1"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    w = next(t for t in data["arguments"] if t["name"] == "w")
    assert w["shape"] == [3, 6]
    shard = next(s for s in w["shards"] if s["device"] == 4)
    assert (shard["index"], shard["shape"], shard["padding"]) == ([[2, 3], [0, 2]], [1, 2], [1, 0])
    assert main(argv) == 0
    arguments = capsys.readouterr().out.split("\narguments:\n", 1)[1]
    (line,) = [n for n in arguments.splitlines() if n.strip().startswith("device   4 [2:3, 0:2]")]
    assert line.endswith("tile [2, 2] with padding 1 in dim 0"), line
