"""Two hosts' reports as one: every host's shards in device order, replicas compared across
hosts, the largest error, the slowest host's times; a result marked with its hosts."""

from shardscope.backend.run.host_reports import hosted_result, merge_reports
from shardscope.backend.run.result import CompiledCollective, RunResult
from shardscope.backend.sharding.hosts import Hosts


def _shard(device: int, start: int, checksum: str) -> dict:
    return {
        "device": device,
        "index": [[start, start + 2]],
        "shape": [2],
        "checksum": checksum,
        "values": None,
        "values_shape": None,
        "values_from": None,
        "host": device // 2,
    }


def _tensor(shards: list[dict], error: float | None, not_finite: bool = False) -> dict:
    return {
        "name": "result[0]",
        "shape": [4],
        "dtype": "float32",
        "spec": "data",
        "hlo_sharding": "",
        "shards": shards,
        "replica_mismatches": [],
        "max_rel_error": error,
        "error_not_finite": not_finite,
    }


def _report(host: int, shards: list[dict], error: float | None, run_s: float) -> dict:
    return {
        "ok": True,
        "host": host,
        "platform": "cpu",
        "device_count": 4,
        "outputs": [_tensor(shards, error)],
        "arguments": [],
        "collectives": [{"kind": "all-reduce"}] if host == 0 else [],
        "hlo_text": "HloModule m" if host == 0 else "",
        "compile_s": 0.1 * (host + 1),
        "run_s": run_s,
        "run_times": [run_s, run_s],
        "memory": {"argument": 8},
        "notes": ["same on both", f"only on host {host}"],
        "concrete_inputs": [],
        "reference_kept": host == 0,
        "stages": {"started": 10.0 + host, "compile": 0.5 - 0.1 * host, "run": 0.1 + host},
    }


def test_shards_of_every_host_in_device_order_and_the_slowest_times():
    host0 = _report(0, [_shard(1, 0, "aa"), _shard(0, 0, "aa")], 1e-7, 0.002)
    host1 = _report(1, [_shard(2, 2, "bb"), _shard(3, 2, "bb")], 3e-7, 0.005)
    merged = merge_reports([host0, host1])
    (out,) = merged["outputs"]
    assert [s["device"] for s in out["shards"]] == [0, 1, 2, 3]
    assert [s["host"] for s in out["shards"]] == [0, 0, 1, 1]
    assert out["max_rel_error"] == 3e-7
    assert out["replica_mismatches"] == []
    assert merged["run_s"] == 0.005 and merged["run_times"] == [0.005, 0.005]
    assert merged["compile_s"] == 0.2
    assert merged["collectives"] == [{"kind": "all-reduce"}]
    assert merged["hlo_text"] == "HloModule m"
    assert merged["notes"] == ["same on both", "only on host 0", "only on host 1"]
    assert merged["reference_kept"] is False
    assert merged["stages"] == {"started": 11.0, "compile": 0.4, "run": 1.1}  # host 1 ended last


def test_replicas_are_compared_across_hosts():
    host0 = _report(0, [_shard(0, 0, "aa"), _shard(1, 0, "aa")], None, 0.001)
    host1 = _report(1, [_shard(2, 0, "aa"), _shard(3, 0, "cc")], None, 0.001)
    (out,) = merge_reports([host0, host1])["outputs"]
    assert out["replica_mismatches"] == [[0, 1, 2, 3]]
    assert out["max_rel_error"] is None


def test_an_error_only_some_hosts_could_give_is_no_error():
    host0 = _report(0, [_shard(0, 0, "aa")], 1e-7, 0.001)
    host1 = _report(1, [_shard(2, 2, "bb")], None, 0.001)
    host1["outputs"][0]["error_not_finite"] = True
    (out,) = merge_reports([host0, host1])["outputs"]
    assert out["max_rel_error"] is None
    assert out["error_not_finite"] is True


def test_a_hosted_result_marks_collectives_crossing_hosts():
    def collective(groups):
        return CompiledCollective("all-reduce", groups, (2,), 8, "op", None, ())

    result = RunResult("p", "cpu", 4, {"data": 2, "model": 2}, [], [], [], [], [], 0.0, 0.0, {})
    result.collectives = [collective(((0, 1), (2, 3))), collective(((0, 2), (1, 3)))]
    done = hosted_result(result, Hosts(2, 4))
    assert done.hosts == 2
    assert [c.crosses_hosts for c in done.collectives] == [False, True]
