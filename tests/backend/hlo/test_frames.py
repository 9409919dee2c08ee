"""Source lines from the stack frame tables of a compiled module (text from a real compile)."""

from pathlib import Path

from shardscope.backend.hlo.frames import FrameTable, SourceLine, is_library_file

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


# The tables of ``inner(middle(outer(x)))``'s compile (jax 0.10.2, this machine), the
# ``inner`` frame moved into an installed library.
STACK = """HloModule jit_outer, is_scheduled=true

FileNames
1 "/tmp/cc/frames3.py"
2 "/venv/lib/python3.11/site-packages/flax/linen/linear.py"

FunctionNames
1 "<module>"
2 "outer"
3 "middle"
4 "inner"

FileLocations
1 {file_name_id=1 function_name_id=1 line=11 end_line=11 column=4 end_column=37}
2 {file_name_id=1 function_name_id=2 line=10 end_line=10 column=11 end_column=24}
3 {file_name_id=1 function_name_id=3 line=7 end_line=7 column=8 end_column=13}
4 {file_name_id=1 function_name_id=3 line=8 end_line=8 column=11 end_column=19}
5 {file_name_id=2 function_name_id=4 line=5 end_line=5 column=11 end_column=21}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}
3 {file_location_id=3 parent_frame_id=3}
4 {file_location_id=4 parent_frame_id=3}
5 {file_location_id=5 parent_frame_id=5}

ENTRY %main () -> f32[] {
}
"""


def test_a_frames_caller_is_its_printed_parent_less_one():
    table = FrameTable(STACK)
    assert [table.caller(f) for f in (5, 4, 3, 2, 1)] == [4, 2, 2, 1, None]


def test_the_user_source_is_the_innermost_frame_outside_the_libraries():
    table = FrameTable(STACK)
    assert table.source(5).file.endswith("flax/linen/linear.py")
    assert table.user_source(5) == SourceLine("/tmp/cc/frames3.py", "middle", 8)
    assert table.user_source(3) == SourceLine("/tmp/cc/frames3.py", "middle", 7)
    assert table.user_source(None) is None


def test_a_stack_of_library_frames_only_gives_the_innermost():
    text = STACK.replace('1 "/tmp/cc/frames3.py"', '1 "/usr/lib/python3/dist-packages/optax/x.py"')
    table = FrameTable(text)
    assert table.user_source(5) == table.source(5)


def test_library_files():
    assert is_library_file("/v/lib/python3.11/site-packages/mymodel/train.py")
    assert is_library_file("/src/equinox/nn/_linear.py")
    assert not is_library_file("/home/me/jaxmodels/train.py")


def test_shardscopes_own_code_and_frameless_files_are_not_the_users():
    import shardscope.backend.program.trace as trace

    assert is_library_file(trace.__file__)
    assert is_library_file("<frozen runpy>")
    # Its examples and test programs are programs like the user's.
    root = Path(trace.__file__).resolve().parents[2]
    assert not is_library_file(str(root / "assets" / "examples" / "mlp.py"))
    assert not is_library_file(str(root / "tests" / "inputs" / "programs" / "nnx_train.py"))


def test_the_capture_hooks_files_are_never_the_users_wherever_they_were():
    # a capture made by another checkout names that checkout's hook
    assert is_library_file(
        "/elsewhere/shardscope/backend/program/capture_site/_shardscope_torch.py"
    )
    assert is_library_file("/x/backend/program/capture_site/sitecustomize.py")
    assert not is_library_file("/home/me/capture_site/train.py")
