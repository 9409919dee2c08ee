"""Source lines from the stack frame tables of a compiled module (text from a real compile)."""

from shardscope.backend.hlo.frames import FrameTable, SourceLine

HEADER = """HloModule jit_train_step, is_scheduled=true

FileNames
1 "/tmp/probe.py"
2 "/x/transformer.py"

FunctionNames
1 "<module>"
2 "train_step"
3 "mlp"

FileLocations
1 {file_name_id=1 function_name_id=1 line=19 end_line=19 column=14 end_column=14}
2 {file_name_id=2 function_name_id=3 line=37 end_line=37 column=11 end_column=11}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

%add (a: f32[], b: f32[]) -> f32[] {
}
"""


def test_a_frame_gives_file_function_and_line():
    table = FrameTable(HEADER)
    assert table.source(2) == SourceLine("/x/transformer.py", "mlp", 37)
    assert table.source(1) == SourceLine("/tmp/probe.py", "<module>", 19)


def test_unknown_frames_give_none():
    table = FrameTable(HEADER)
    assert table.source(None) is None
    assert table.source(99) is None
    assert FrameTable("HloModule m\n\nENTRY %main () -> f32[] {\n}\n").source(1) is None
