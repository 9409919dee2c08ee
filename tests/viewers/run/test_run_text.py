"""The Run dock's words for a run: shard index ranges, bytes per element, device groups,
what a compiled collective was matched with, the summary line and each host's devices."""

from shardscope.backend.run.result import PredictedRef, RunResult, Shard
from shardscope.viewers.run.run_text import (
    groups_text,
    host_devices_text,
    index_text,
    itemsize,
    predicted_text,
    summary_text,
)


def result(**changes) -> RunResult:
    fields = dict(
        program="f",
        platform="cpu",
        device_count=8,
        mesh={"data": 4, "model": 2},
        outputs=[],
        arguments=[],
        collectives=[],
        predicted_only=[],
        warnings=[],
        compile_s=1.5,
        run_s=0.0031234,
        memory={"argument": 3 * 2**20, "generated_code": 99, "temp": 512},
        run_times=[0.003] * 7,
    )
    return RunResult(**(fields | changes))


def test_an_index_is_each_dimensions_start_and_stop():
    assert index_text(((0, 2), (0, 16))) == "[0:2, 0:16]"
    assert index_text(((4, 8),)) == "[4:8]"
    assert index_text(()) == "[]"


def test_itemsize_reads_the_bits_in_the_dtypes_name():
    assert itemsize("float32") == 4
    assert itemsize("bfloat16") == 2
    assert itemsize("int64") == 8
    assert itemsize("complex128") == 16
    assert itemsize("bool") == 1 and itemsize("uint8") == 1
    assert itemsize("int4") == 1  # under a byte: a byte each
    assert itemsize("object") == 4  # no digits to read


def test_groups_are_cut_after_the_limit_and_unknown_groups_say_so():
    assert groups_text(((0, 1), (2, 3))) == "{0,1} {2,3}"
    assert groups_text(None) == "?"
    assert groups_text(()) == ""
    many = tuple((i, i + 10) for i in range(10))
    assert groups_text(many, limit=2) == "{0,10} {1,11} … (10 groups)"
    assert groups_text(many[:8]) == " ".join(f"{{{i},{i + 10}}}" for i in range(8))


def test_a_collective_names_what_it_was_matched_with():
    assert predicted_text(()) == "unmatched"
    reduce = PredictedRef("all-reduce", ("data", "model"), 3, "jit(f)/dot_general", 12, 256)
    gather = PredictedRef("all-gather", (), 5, "jit(f)/mul", 20, 128)
    assert predicted_text((reduce,)) == "all-reduce data+model"
    assert predicted_text((reduce, gather)) == "all-reduce data+model, all-gather —"


def test_the_summary_says_where_it_ran_how_long_it_took_and_the_memory_per_device():
    assert summary_text(result()) == (
        "f: CPU, 8 devices (mesh data=4, model=2) · compile 1.500 s · run 3.123 ms "
        "(median of 7) · per device: argument 3.0 MiB, temp 512 B"
    )
    quiet = summary_text(result(memory={"generated_code": 10}, run_times=[]))
    assert quiet.endswith("run 3.123 ms (median of 0)")


def test_a_run_on_several_hosts_says_how_the_devices_were_split():
    text = summary_text(result(hosts=2, memory={}))
    assert text == (
        "f: CPU, 8 devices (mesh data=4, model=2) on 2 hosts (2 processes of 4 devices)"
        " · compile 1.500 s · run 3.123 ms (median of 7)"
    )


def shard(device: int, host: int) -> Shard:
    return Shard(device, ((0, 1),), (1,), "aa", host=host)


def test_each_host_lists_its_devices_a_run_of_three_or_more_as_a_range():
    shards = [shard(d, d // 4) for d in (7, 0, 3, 1, 2, 6, 5, 4)]
    assert host_devices_text(shards) == "h0: devices 0–3 · h1: devices 4–7"
    pairs = [shard(d, d // 2) for d in range(4)]
    assert host_devices_text(pairs) == "h0: devices 0,1 · h1: devices 2,3"
    gaps = [shard(d, 0) for d in (0, 2, 3)]
    assert host_devices_text(gaps) == "h0: devices 0,2,3"
    assert host_devices_text([]) == ""
