"""Dumped HLO protos as StableHLO text: the import worker's conversion (the fixture is a
torch_xla 2.9 dump of tests/inputs/torch/tiny.py)."""

import re
from pathlib import Path

import pytest

from shardscope.backend.program.hlo_import import import_job, module_proto, stablehlo_text

PROTO = next(Path("tests/inputs/torch/tiny_capture/torch_dump").glob("*.hlo.pb"))


def test_a_dump_converts_with_its_shardings_and_the_users_call_stack():
    text = stablehlo_text(PROTO.read_bytes())
    assert "func.func @main(" in text
    assert text.count("mhlo.sharding") >= 5
    # the call stack XLA kept reaches the script's own lines, and ops carry their scope
    # (torch_xla numbers each scope it opened: ``up.1``)
    assert "tiny.py" in text and re.search(r'"up\.\d+/aten__', text)


def test_the_module_inside_a_dump_is_field_one():
    data = PROTO.read_bytes()
    module = module_proto(data)
    assert 0 < len(module) < len(data) and data.find(module) > 0


@pytest.mark.parametrize("data", [b"", b"\x0a\xff\xff", b"\x0f\x00", b"\x10\x01"])
def test_bytes_that_are_not_a_dump_are_refused_with_a_reason(data):
    with pytest.raises(ValueError, match="not an HLO proto"):
        module_proto(data)


def test_the_job_reports_each_dump_it_could_not_read(tmp_path):
    bad = tmp_path / "bad.hlo.pb"
    bad.write_bytes(b"\x0a\x03abc")
    report = import_job({"protos": [str(PROTO), str(bad)]}, tmp_path)
    good, failed = report["modules"]
    assert "text" in good and "error" in failed and "\n" not in failed["error"]


def test_a_pipe_where_a_dump_belongs_is_reported_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "module_0000.SyncTensorsGraph.1.before_optimizations.hlo.pb"
    os.mkfifo(fifo)  # no writer: a blocking read would wait forever
    (failed,) = import_job({"protos": [str(fifo)]}, tmp_path)["modules"]
    assert "is a pipe (FIFO), not a regular file" in failed["error"]
    assert not failed["error"].startswith("ShardscopeError")  # its own line, not a class name
