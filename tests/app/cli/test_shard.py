"""``python main.py shard``: JSON output for the issue's example and one-line errors."""

import json

import pytest

from shardscope.app.cli.main import main


def run_json(capsys, *args: str) -> dict:
    assert main(["shard", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_issue_example_json(capsys):
    out = run_json(
        capsys,
        "--mesh",
        "data=4,model=2",
        "--device-order",
        "0,2,4,6,1,3,5,7",
        "--shape",
        "16,32",
        "--spec",
        "data,_",
    )
    assert {"kind", "hlo_sharding", "sdy_sharding", "tiles"} <= set(out)
    assert out["kind"] == "partially replicated"
    assert out["torch_xla_kind"] == "partial"
    assert out["hlo_sharding"] == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    assert out["hlo_sharding_logical"] == out["hlo_sharding"]
    assert (
        out["hlo_sharding_device_ids"]
        == "{devices=[4,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
    )
    assert out["sdy_sharding"] == '#sdy.sharding<@mesh, [{"data"}, {}]>'
    assert out["tiles"] == {
        "0": [[0, 4], [0, 32]],
        "2": [[0, 4], [0, 32]],
        "4": [[4, 8], [0, 32]],
        "6": [[4, 8], [0, 32]],
        "1": [[8, 12], [0, 32]],
        "3": [[8, 12], [0, 32]],
        "5": [[12, 16], [0, 32]],
        "7": [[12, 16], [0, 32]],
    }
    assert out["warnings"] == []


@pytest.mark.parametrize("spec", [("data", None), ("model", "data"), (None, "model")])
def test_hlo_sharding_is_what_a_compiled_module_prints(capsys, spec):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    order = [0, 2, 4, 6, 1, 3, 5, 7]
    devices = {d.id: d for d in jax.devices()}
    mesh = Mesh(np.array([devices[i] for i in order]).reshape(4, 2), ("data", "model"))
    sharding = NamedSharding(mesh, PartitionSpec(*spec))
    compiled = jax.jit(lambda x: x * 2, in_shardings=sharding, out_shardings=sharding)
    text = compiled.lower(jnp.zeros((16, 32))).compile().as_text()
    param = next(line for line in text.splitlines() if "parameter(0), sharding=" in line)
    printed = param.split("sharding=", 1)[1].split("}", 1)[0] + "}"
    out = run_json(
        capsys,
        "--mesh",
        "data=4,model=2",
        "--device-order",
        ",".join(map(str, order)),
        "--shape",
        "16,32",
        "--spec",
        ",".join(a or "_" for a in spec),
    )
    assert out["hlo_sharding"] == printed


def test_uneven_shape_warns_and_tuple_spec(capsys):
    out = run_json(capsys, "--mesh", "x=4,y=2", "--shape", "10", "--spec", "y+x")
    assert out["kind"] == "tiled"
    assert out["hlo_sharding"] == "{devices=[8]<=[4,2]T(1,0)}"
    assert out["tiles"]["2"] == [[2, 4]]  # y is major: (x=1, y=0) is tile 1
    assert out["tiles"]["1"] == [[8, 10]]
    assert out["tiles"]["7"] == [[10, 10]]
    assert "padding" in out["warnings"][0]


def test_human_table(capsys):
    assert main(["shard", "--mesh", "data=4,model=2", "--shape", "16,32", "--spec", "_,model"]) == 0
    text = capsys.readouterr().out
    assert "partially replicated" in text
    assert "[0:16, 16:32]" in text


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (
            ["--mesh", "data=4,data=2", "--shape", "8", "--spec", "data"],
            "give each axis a distinct name",
        ),
        (["--mesh", "data=4", "--shape", "8", "--spec", "model"], "use one of data"),
        (["--mesh", "data=4", "--shape", "8,8", "--spec", "data", "--strict"], "one entry per dim"),
        (
            ["--mesh", "data=4", "--device-order", "0,1,1,2", "--shape", "8", "--spec", "data"],
            "permutation",
        ),
        (["--mesh", "data=4", "--shape", "8,x", "--spec", "data"], "write it like 16,32"),
    ],
)
def test_bad_input_is_one_line_error(capsys, args, fix):
    assert main(["shard", *args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert fix in err
