"""The Collectives dock's columns read without Qt: each cell of a compiled and a predicted
collective, its sort key, and the columns shown only on several hosts."""

import subprocess
import sys
from dataclasses import replace

from shardscope.backend.columns import column_names
from shardscope.backend.propagation.predicted_collectives import Collective
from shardscope.backend.run.result import CollectiveCause, CollectiveTensor, CompiledCollective
from shardscope.viewers.debugger.collective_columns import (
    COMPILED,
    PREDICTED,
    CompiledRow,
    PredictedRow,
)

GATHER = CompiledCollective(
    kind="all-gather",
    device_groups=((0, 1), (2, 3)),
    shape=(8, 4),
    bytes=1536,
    source="jit(f)/add",
    line=9,
    predicted=(),
    file="/src/conflict.py",
    tensors=(
        CollectiveTensor("jit(f)/add", None, "/src/conflict.py", 9, "partitioner", "forward"),
    ),
    axes=("data",),
    origin="partitioner",
    cause=CollectiveCause("conflict", "y is gathered for add", tensor="y"),
    crosses_hosts=True,
)


def cells(columns, row) -> dict[str, str]:
    return {c.name: c.cell(row) for c in columns}


def test_a_compiled_row_reads_each_column_and_sorts_bytes_as_numbers():
    row = CompiledRow(GATHER, None, seconds=2.002e-5, across=3072, time_tip="2 hops")
    assert cells(COMPILED, row) == {
        "Kind": "all-gather",
        "Axes": "data",
        "Group": "2",
        "Operands": "1",
        "Bytes / device": "1.5 KiB",
        "Est. time": "20.0 µs",
        "Hosts": "crosses",
        "Across hosts": "3.0 KiB",
        "Tensor": "y",
        "Op": "—",
        "Line": "conflict.py:9",
        "Origin": "partitioner",
        "Pass": "forward",
        "Prediction": "none",
        "Cause": "y is gathered for add",
    }
    keys = {c.name: c.sort_key(row) for c in COMPILED}
    assert keys["Bytes / device"] == 1536 and keys["Est. time"] == 2.002e-5
    tips = {c.name: c.cell_tip(row) for c in COMPILED}
    assert tips["Est. time"] == "2 hops" and tips["Cause"] == "y is gathered for add"
    assert tips["Kind"] is None  # the row's own tooltip


def test_a_combined_row_of_forward_and_backward_operands_reads_both():
    back = CollectiveTensor("jit(f)/transpose(jvp())/add", None, "/src/c.py", 9, "user", "backward")
    both = replace(GATHER, tensors=(*GATHER.tensors, back), operands=2, origin="mixed")
    assert cells(COMPILED, CompiledRow(both, None))["Pass"] == "both"
    assert cells(COMPILED, CompiledRow(both, None))["Origin"] == "mixed"


def test_an_unpriced_row_says_it_does_not_know_and_sorts_last():
    row = CompiledRow(GATHER, None)
    assert cells(COMPILED, row)["Est. time"] == "—" and cells(COMPILED, row)["Across hosts"] == "—"
    keys = {c.name: c.sort_key(row) for c in COMPILED}
    assert keys["Est. time"] == -1.0 and keys["Across hosts"] == -1


def test_a_predicted_row_says_whether_a_compiled_one_matched_it():
    c = Collective(1, "stablehlo.add", "collective_permute", ("data",), None, ((), ()), 512, 2)
    flags = [cells(PREDICTED, PredictedRow(c, None, m))["Compiled"] for m in (None, True, False)]
    assert flags == ["—", "matched", "not compiled"]
    row = PredictedRow(c, None, True, False)
    assert cells(PREDICTED, row)["Op"] == "stablehlo.add (op 1)"
    assert cells(PREDICTED, row)["Hosts"] == "within"
    assert row.tip.startswith("collective_permute → [_, _]; bytes per device = S:")


def test_only_the_host_columns_wait_for_several_hosts():
    assert [c.name for c in COMPILED if c.several_hosts] == ["Hosts", "Across hosts"]
    assert [c.name for c in PREDICTED if c.several_hosts] == ["Hosts"]
    assert column_names(COMPILED)[-1] == "Cause"  # the cause takes what is left


def test_the_columns_and_lines_load_without_qt():
    code = (
        "import sys\n"
        "import shardscope.viewers.debugger.collective_columns\n"
        "import shardscope.viewers.debugger.collective_lines\n"
        "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
