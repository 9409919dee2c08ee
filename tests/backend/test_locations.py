"""Reading MLIR location text."""

from backend.locations import parse_location, scope_of, split_name_path


def test_op_location_with_call_sites():
    text = (
        'loc("jit(f)/block/dot_general"(callsite("block"("/tmp/t.py":6:24 to :29) at '
        'callsite("f"("/tmp/t.py":8:8 to :30) at "<module>"("/tmp/t.py":14:10 to :68)))))'
    )
    info = parse_location(text)
    assert info.name == "jit(f)/block/dot_general"
    assert (info.file, info.line) == ("/tmp/t.py", 6)


def test_argument_location_is_a_key_path():
    info = parse_location("loc(\"params['w1']\")")
    assert info.name == "params['w1']" and info.file is None


def test_plain_file_location_and_unknown():
    assert parse_location('loc("a.py":3:1)').line == 3
    assert parse_location('loc("a.py":3:1)').name is None
    assert parse_location("loc(unknown)").name is None


def test_escaped_quotes_and_fused():
    info = parse_location('loc(fused["x \\"y\\"/add"("f.py":2:1), "g.py":9:9])')
    assert info.name == 'x "y"/add' and (info.file, info.line) == ("f.py", 2)


def test_garbage_is_not_an_error():
    assert parse_location('loc("unterminated').name is None


def test_scopes():
    assert scope_of("jit(f)/block/add") == "block"
    assert scope_of("jit(f)/add") == ""
    assert (
        scope_of("jit(f)/transpose(jvp(layer_0))/attn/dot_general")
        == "transpose(jvp(layer_0))/attn"
    )
    assert scope_of("cell/tanh") == "cell"
    assert scope_of(None) == ""
    assert split_name_path("a(b/c)/d") == ["a(b/c)", "d"]
