"""``python main.py shard``: JSON output for the issue's example and one-line errors."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
        out["hlo_sharding_device_ids"] == "{devices=[4,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
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


HUGE_PRIORITY = "data@p" + "9" * 5000


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (["--mesh", "data=4", "--shape", "99999999999999999999,8", "--spec", "data"], "smaller"),
        (["--mesh", "data=10000000000", "--shape", "8", "--spec", "data"], "smaller axis sizes"),
        (["--mesh", "data=1000000", "--shape", "8", "--spec", "data"], "(65,536)"),
        (["--mesh", "a=\u0664", "--shape", "8", "--spec", "a"], "digits 0-9"),
        (["--mesh", "a=4", "--shape", "\u0664", "--spec", "a"], "digits 0-9"),
        (["--mesh", "a=4", "--shape", "8,,8", "--spec", "a"], "single commas"),
        (["--mesh", "a=4,,b=2", "--shape", "8", "--spec", "a"], "single commas"),
        (["--mesh", "a=4", "--axis-types", "Auto,,", "--shape", "8", "--spec", "a"], "single"),
        (["--mesh", "a=4", "--device-order", "0,,1,2,3", "--shape", "8"], "like 0,2,4,6"),
        (["--mesh", "a=4", "--device-order", "0,1,2,\u0663", "--shape", "8"], "like 0,2,4,6"),
        (["--mesh", "data=4", "--shape", "8", "--spec", HUGE_PRIORITY], "to p999999"),
        (["--mesh", "data=4", "--shape", "8", "--spec", "data@p\u0664"], "malformed"),
        (["--mesh", "data=4", "--shape", ",".join(["1"] * 100), "--spec", "data"], "at most"),
    ],
)
def test_numeric_edge_input_is_one_line_error(capsys, args, fix):
    assert main(["shard", *args]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert err.startswith("error: ") and "\n" not in err and len(err) < 300
    assert fix in err


def test_a_python_one_tuple_is_a_shape(capsys):
    out = run_json(capsys, "--mesh", "a=4", "--shape", "(16,)", "--spec", "a")
    assert out["tiles"]["3"] == [[12, 16]]


def test_the_largest_shape_keeps_exact_tile_bounds(capsys):
    size = 2**62
    out = run_json(capsys, "--mesh", "a=4", "--shape", str(size), "--spec", "a")
    assert out["tiles"]["3"] == [[3 * size // 4, size]]


# Text from the characters the CLI syntax uses and some it must refuse, and numbers of
# every size (a mesh axis of 10**20 devices, a shape of 20 digits).
_PIECES = st.text(
    alphabet=st.sampled_from(list("0123456789,,,==+_?@p ()[]-ab\u0664\u0663x.")), max_size=24
)
_NUMBERS = st.one_of(
    st.integers(min_value=-3, max_value=70_000).map(str),
    st.integers(min_value=-(10**25), max_value=10**25).map(str),
    st.integers(min_value=0, max_value=5000).map(lambda n: "1" + "0" * n),
)
_FIELD = st.one_of(_PIECES, _NUMBERS, st.lists(_NUMBERS, min_size=1, max_size=4).map(",".join))
_AXES = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.one_of(_NUMBERS, _PIECES)),
    min_size=1,
    max_size=3,
    unique_by=lambda axis: axis[0],
)
_MESH = st.one_of(_FIELD, _AXES.map(lambda axes: ",".join(f"{n}={v}" for n, v in axes)))
_SPEC = st.one_of(
    _FIELD,
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "_", "a+b", ""]), st.sampled_from(["", "?"]), _NUMBERS
        ),
        max_size=3,
    ).map(lambda dims: ",".join(f"{a}{o}@p{p}" for a, o, p in dims)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mesh=_MESH, shape=_FIELD, spec=_SPEC, order=st.one_of(st.none(), _FIELD))
def test_any_mesh_shape_spec_text_works_or_is_one_line_error(mesh, shape, spec, order):
    import contextlib
    import io

    argv = ["shard", f"--mesh={mesh}", f"--shape={shape}", f"--spec={spec}", "--json"]
    if order is not None:
        argv.append(f"--device-order={order}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    if code == 0:
        json.loads(out.getvalue())
    else:
        assert code in (1, 2)
        message = err.getvalue().strip()
        assert message.startswith("error: ") and "\n" not in message, message
