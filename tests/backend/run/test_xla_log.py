"""XLA's warnings read from a worker's stderr and joined to their op."""

from shardscope.backend.run.xla_log import instruction_op_names, read_warnings

HLO = [
    '  %all-gather.1 = f32[16,32]{1,0} all-gather(%param.1), metadata={op_name="jit(f)/add" stack_frame_id=2}',
    "  %param.1 = f32[4,32]{1,0} parameter(0)",
]
# The prefix is absl's, as XLA logs here (an info line from this machine, its letter
# changed to W and E).
LOG = """\
I1130 18:24:58.990819   16424 pjrt_client.cc:579] PjRt-IFRT device count: total=1, addressable=1
W1130 18:24:59.000001   16424 spmd_partitioner.cc:652] Involuntary full rematerialization. The compiler cannot go from sharding {devices=[4,1]<=[4]} to {devices=[1,4]<=[4]} efficiently for HLO operation %all-gather.1
E1130 18:24:59.000002   16424 other.cc:1] something failed in %nothing
/path/user.py:3: UserWarning: not XLA's
W1130 18:24:59.000001   16424 spmd_partitioner.cc:652] Involuntary full rematerialization. The compiler cannot go from sharding {devices=[4,1]<=[4]} to {devices=[1,4]<=[4]} efficiently for HLO operation %all-gather.1
"""


def test_warnings_are_kept_once_and_joined_to_their_op():
    warnings = read_warnings(LOG, instruction_op_names(HLO))
    assert len(warnings) == 2
    first = warnings[0]
    assert first["message"].startswith("Involuntary full rematerialization")
    assert first["instruction"] == "all-gather.1" and first["op_name"] == "jit(f)/add"
    assert warnings[1]["instruction"] == "" and warnings[1]["op_name"] == ""


def test_instruction_names_map_to_op_names():
    assert instruction_op_names(HLO) == {"all-gather.1": "jit(f)/add"}
