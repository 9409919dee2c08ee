"""XLA's warnings on their program ops: what a full rematerialization costs a device."""

from shardscope.backend.run.op_warnings import remat_bytes


def test_remat_bytes_read_the_pieces_from_the_sharding_it_leaves():
    # As XLA logged it on this machine for a (16, 12) f32 argument over a 2 x 4 mesh.
    message = (
        "[SPMD] Involuntary full rematerialization. The compiler cannot go from sharding "
        "{devices=[2,4]<=[8]} to {maximal device=0} efficiently for HLO operation %param = "
        'f32[8,3]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}, metadata={op_name="x"}.'
    )
    assert remat_bytes(message) == 16 * 12 * 4 - 8 * 3 * 4
    assert remat_bytes("something else") == 0
