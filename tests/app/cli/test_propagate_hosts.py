"""``python main.py propagate --hosts H --dcn AXIS=N``: the compiled collectives that cross
hosts, traffic within and across hosts, host warnings, and one-line errors."""

import contextlib
import io
import json

import pytest

from shardscope.app.cli.main import main
from tests.support.inputs import PROGRAMS

SOURCE = str(PROGRAMS / "hosts_data_model.py")


def _json(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["propagate", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def mlp_blocks():
    # mlp: data=4, model=2; layer2's all-reduce over model, groups {0,1}, {2,3}, ...
    return _json("example:mlp", "--hosts", "2")


@pytest.fixture(scope="module")
def mlp_model_across():
    return _json("example:mlp", "--dcn", "model=2")


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
    data = _json("example:mlp")
    assert data["hosts"] == 1 and data["cost"]["hosts"] == 1
    assert "crosses_hosts" not in data["predicted_collectives"][0]
    assert data["collectives"][0]["crosses_hosts"] is False
    assert data["cost"]["step_bytes_across_hosts"] == 0
    assert data["cost"]["collectives"][0]["seconds"] == (
        pytest.approx(mlp_blocks["cost"]["collectives"][0]["seconds"], rel=1e-12)
    )


def test_the_summary_shows_hosts_crossings_traffic_and_warnings(capsys):
    assert main(["propagate", SOURCE, "--hosts", "2"]) == 0
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
    assert main(["propagate", SOURCE, *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_host_count_that_is_not_a_number_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["propagate", SOURCE, "--hosts", "two"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2
    assert "give e.g. --hosts 2" in err and len(err.splitlines()) == 1
