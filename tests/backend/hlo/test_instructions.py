"""Reading instructions and their shardings out of HLO text."""

from shardscope.backend.hlo.instructions import hlo_opcode, read_hlo_instructions

HLO = """
ENTRY %main.1 (x.1: f32[16,32], y.1: f32[16,32]) -> f32[16,32] {
  %x.1 = f32[16,32]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}, metadata={op_name="x"}
  %sin.1 = f32[16,32]{1,0} sine(%x.1), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}, metadata={op_name="jit(f)/sin" stack_frame_id=2}
  ROOT %add.1 = f32[16,32]{1,0} add(%sin.1, %x.1), sharding={replicated}, metadata={op_name="jit(f)/add"}
}
"""


def test_read_hlo_instructions():
    got = read_hlo_instructions(HLO)
    assert [(i["opcode"], i["shape"], i["op_name"]) for i in got] == [
        ("sine", [16, 32], "jit(f)/sin"),
        ("add", [16, 32], "jit(f)/add"),
    ]
    assert got[1]["sharding"] == "{replicated}"


def test_tuples_parameters_and_unsharded_instructions_are_left_out():
    text = (
        "  %p = f32[4]{0} parameter(0), sharding={replicated}\n"
        "  %t = (f32[4]{0}) tuple(%p), sharding={{replicated}}\n"
        "  %n = f32[4]{0} negate(%p)\n"
        "  %c = f32[4]{0} cosine(%p), sharding={maximal device=0}\n"
    )
    got = read_hlo_instructions(text)
    assert got == [
        {"opcode": "cosine", "shape": [4], "op_name": "", "sharding": "{maximal device=0}"}
    ]


def test_hlo_opcodes_of_stablehlo_ops():
    assert hlo_opcode("stablehlo.dot_general") == "dot"
    assert hlo_opcode("stablehlo.broadcast_in_dim") == "broadcast"
    assert hlo_opcode("stablehlo.dynamic_slice") == "dynamic-slice"
    assert hlo_opcode("stablehlo.add") == "add"
