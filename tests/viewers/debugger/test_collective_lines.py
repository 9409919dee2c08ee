"""The Collectives dock's lines around its tables, worded without Qt."""

from __future__ import annotations

import functools
from types import SimpleNamespace

from shardscope.backend.analysis.analyse import analyse
from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.run.compiled import COMPILE_CANCELLED, MAX_CPU_DEVICES
from shardscope.backend.run.result import NotCompiled
from shardscope.viewers.debugger.collective_lines import (
    EMPTY_STATUS,
    HEADER,
    compile_state,
    groups_text,
    memory_text,
    predicted_lines,
    tab_texts,
)
from tests.support.compile_oracle import loaded, propagated


@functools.cache
def compiled(source: str) -> Analysis:
    return analyse(loaded(source))


def _lines(result, **kw):
    args = {"compiled": False, "compiling": False, "pending": False, "note": "", "hosts": 1}
    return predicted_lines(result, **{**args, **kw})


def test_the_prediction_says_how_its_compile_went():
    result = Analysis(propagated("example:conflict"))
    assert _lines(None).status == EMPTY_STATUS
    assert _lines(None, pending=True).status == "Propagating…"
    assert _lines(result, compiling=True).header == f"{HEADER} — compiling…"
    failed = result.with_parts(compile=NotCompiled("boom"))
    assert _lines(failed).status == "The XLA compile failed: boom"
    assert _lines(failed).header.endswith("— the compile failed")
    cancelled = result.with_parts(compile=NotCompiled(COMPILE_CANCELLED))
    assert "propagate again (F5)" in _lines(cancelled).status
    noted = _lines(result, note="Not compiled: too many devices")
    assert noted.status == "Not compiled: too many devices"


def test_a_compiled_prediction_counts_the_matches():
    result = compiled("example:conflict")
    matched = [m for m in result.predicted_matched if m is not None]
    lines = _lines(result, compiled=True)
    n = len(result.collectives)
    assert lines.status.startswith(f"{n} collective{'s' if n != 1 else ''} Shardy inserts")
    assert f"{sum(matched)} of {len(matched)} matched by a compiled one" in lines.status
    assert lines.totals.startswith("Per device: ")
    assert _lines(result, compiled=True, hosts=2).traffic.startswith("On 2 hosts: ")


def test_groups_and_memory_read_as_one_line_each():
    assert groups_text("all_gather", ["data"], [(0, 2), (1, 3)]) == (
        "all_gather over data: 2 groups of 2 devices, outlined on the mesh: {0, 2} {1, 3}"
    )
    many = groups_text("all_reduce", None, [(i,) for i in range(20)])
    assert "no whole mesh axis" in many and many.endswith("… 4 more")
    assert memory_text(None, None) == ""
    memory = {"argument": 1536, "output": 1024, "alias": 512, "temp": 2048, "peak": 2048}
    text = memory_text(memory, "fits in 16 GB: <1%")
    # What the buffers hold (1.5 + 1 - 0.5 + 2 KiB) comes first and says what it sums.
    assert text.startswith(
        "Memory per device, XLA's CPU buffer assignment: holds 4.0 KiB (arguments + outputs"
        " + temporaries - aliased), fits in 16 GB: <1% · arguments 1.5 KiB"
    )
    assert text.endswith("aliased 512 B · XLA's peak 2.0 KiB")


def test_a_mesh_over_one_process_s_devices_is_noted_and_never_compiling():
    def analysis(size, compiled=None, error=None):
        mesh = SimpleNamespace(size=size)
        return SimpleNamespace(mesh=mesh, compiled=compiled, compile_error=error)

    assert compile_state(None) == (False, "")
    compiling, note = compile_state(analysis(MAX_CPU_DEVICES + 1))
    assert not compiling
    assert note.startswith(f"Not compiled: the mesh has {MAX_CPU_DEVICES + 1} devices")
    assert compile_state(analysis(MAX_CPU_DEVICES)) == (True, "")
    assert compile_state(analysis(8, compiled=object())) == (False, "")
    assert compile_state(analysis(8, error="boom")) == (False, "")


def _texts(analysis) -> list[str]:
    return [text for text, _tip in tab_texts(analysis)]


def test_the_tabs_name_who_compiled_and_whose_prediction_it_is():
    assert _texts(None) == ["Compiled (XLA)", "Shardy's prediction"]
    jax = SimpleNamespace(framework="jax", partitioner="shardy", compiled_by="shardscope")
    assert _texts(jax) == ["Compiled (XLA)", "Shardy's prediction"]
    # a torch_xla capture as the script ran it: torch_xla's own compile, with GSPMD
    torch = SimpleNamespace(framework="torch_xla", partitioner="gspmd", compiled_by="torch_xla")
    (compiled, compiled_tip), (predicted, predicted_tip) = tab_texts(torch)
    assert (compiled, predicted) == (
        "Compiled (torch_xla, GSPMD)",
        "Shardy's prediction (shardscope)",
    )
    assert "as the script ran it" in compiled_tip
    assert "torch_xla partitions with GSPMD" in predicted_tip
    # edited, shardscope compiles it with Shardy
    edited = SimpleNamespace(framework="torch_xla", partitioner="gspmd", compiled_by="shardscope")
    assert _texts(edited)[0] == "Compiled (XLA, Shardy)"
