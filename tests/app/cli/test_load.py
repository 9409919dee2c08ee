"""``python main.py load``: JSON and text summaries, one-line errors."""

import json

import pytest

from shardscope.app.cli.main import main


def test_load_json(capsys):
    assert main(["load", "example:conflict", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["name"] == "conflict" and info["kind"] == "example"
    names = {v["name"]: v for v in info["values"]}
    assert names["x"]["shape"] == [16, 32] and names["x"]["role"] == "arg"
    assert names["result[0]"]["role"] == "result"
    assert info["specs"] == {"x": ["data", None], "y": ["model", None]}


def test_load_text(capsys):
    assert main(["load", "example:scan"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scan (example,") and "h0" in out and "rnn" in out


def test_bad_input_is_one_line_and_nonzero(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    cases = [str(tmp_path / "missing.py"), str(bad), "example:nope"]
    for source in cases:
        assert main(["load", source]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, err


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def test_an_example_name_outside_the_examples_folder_is_refused(capsys):
    # A real Python program two folders above assets/examples/: it must not run.
    err = _one_line_error(capsys, ["load", "example:../../tests/inputs/programs/pytree"])
    assert "no built-in example" in err and "mlp" in err and "transformer" in err


def test_a_pipe_or_device_named_mlir_is_refused_at_once(tmp_path, capsys):
    import os

    fifo = tmp_path / "pipe.mlir"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.mlir"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        assert "not a regular file" in _one_line_error(capsys, ["load", str(path)])


def test_a_mlir_file_over_the_limit_names_the_limit(tmp_path, capsys, monkeypatch):
    from shardscope.backend.program import load

    monkeypatch.setattr(load, "MAX_MLIR_BYTES", 2**20)
    big = tmp_path / "big.mlir"
    big.write_text("// padding\n" * 200_000)
    assert "MiB, over the 1.0 MiB it may be" in _one_line_error(capsys, ["load", str(big)])


def test_timeout_bounds_reading_a_mlir_file(tmp_path, capsys):
    from tests.support.inputs import MLIR

    err = _one_line_error(capsys, ["load", str(MLIR / "sdy.mlir"), "--timeout", "0.000001"])
    assert "did not finish within 1e-06 s" in err and "--timeout" in err


def test_a_mlir_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"module {\xff\xfe}")
    assert "not UTF-8" in _one_line_error(capsys, ["load", str(bad)])


def test_deeply_nested_locations_are_one_line_not_a_crash(tmp_path, capsys):
    from tests.support.inputs import MLIR

    deep = "fused[" * 50_000 + '"x"' + "]" * 50_000
    text = (MLIR / "plain.mlir").read_text().replace("loc(#loc19)", f"loc({deep})", 1)
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    err = _one_line_error(capsys, ["load", str(path)])
    assert "brackets nest 50003 deep, over the 1000" in err


@pytest.mark.parametrize("timeout", ["nan", "-1", "1e308"])
def test_loads_own_timeout_is_checked_like_the_others(timeout, capsys):
    with pytest.raises(SystemExit) as info:
        main(["load", "example:mlp", "--timeout", timeout])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "--timeout" in err


def test_results_are_listed_by_index(capsys):
    # The training step computes its loss (result[18]) before the gradients.
    assert main(["load", "example:transformer"]) == 0
    names = [line.split()[1] for line in capsys.readouterr().out.splitlines() if " result[" in line]
    assert names == [f"result[{i}]" for i in range(len(names))] and len(names) > 10


TORCH_CONFLICT = "tests/inputs/torch/capture_conflict.json"


def test_a_torch_xla_capture_loads_with_its_framework_mesh_order_and_specs(capsys):
    assert main(["load", TORCH_CONFLICT, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["framework"], info["partitioner"]) == ("torch_xla", "gspmd")
    assert info["device_order"] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert main(["load", TORCH_CONFLICT]) == 0
    out = capsys.readouterr().out
    assert "a torch_xla graph, partitioned by GSPMD" in out
    assert "over devices 0,2,4,6,1,3,5,7" in out
    # the specs conflict.py gave, in its own words
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("  arg")}
    # ... and the call that gave each, at its line
    assert lines["x"].endswith(
        '= ("data", None)  [Shard(0), Replicate()]  by xs.mark_sharding at conflict.py:21'
    )
    assert '= ("model", None)  [Replicate(), Shard(0)]  by xs.mark_sharding at' in lines["y"]


TORCH_BLOCK = "tests/inputs/torch/capture_block.json#sync2"


def test_a_torch_xla_captures_weights_list_their_dtensor_placements(capsys):
    assert main(["load", TORCH_BLOCK]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("  arg")}
    # train_block.py's marks on the (data=4, model=2) mesh
    assert '= ("model", None)  [Replicate(), Shard(0)]  by ' in lines["model.up.weight"]
    assert '= (None, "model")  [Replicate(), Shard(1)]  by ' in lines["model.down.weight"]
    assert '= ("data", None, None)  [Shard(0), Replicate()]  by ' in lines["tokens"]
    assert main(["load", TORCH_BLOCK, "--json"]) == 0
    values = {v["display_name"]: v for v in json.loads(capsys.readouterr().out)["values"]}
    weight = values["model.down.weight"]
    assert (weight["torch_xla"], weight["dtensor"]) == (
        '(None, "model")',
        "[Replicate(), Shard(1)]",
    )


def test_a_jax_programs_tensors_have_no_torch_forms(capsys):
    assert main(["load", "example:mlp", "--json"]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    assert values and not [v for v in values if "dtensor" in v or "torch_xla" in v]


def test_scopes_are_listed_in_natural_order(capsys):
    assert main(["load", "example:transformer?layers=11", "--json"]) == 0
    scopes = list(json.loads(capsys.readouterr().out)["scopes"])
    forward = [s for s in scopes if s.startswith("jvp(layer_")]
    assert forward == [f"jvp(layer_{i})" for i in range(11)]
    backward = [s for s in scopes if s.startswith("transpose(jvp(layer_")]
    assert backward == [f"transpose(jvp(layer_{i}))" for i in range(11)]
