"""A module run's report as a RunResult: the worker's figures carried over, its compiled
collectives matched with a propagation's prediction, its notes kept."""

import json

from shardscope.backend.program.load import Program, parse_program_text
from shardscope.backend.propagation.propagate import propagate
from shardscope.backend.run.compiled import read_compile
from shardscope.backend.run.module_worker import run_module_job
from shardscope.backend.run.report import explained_json, read_explained, report_result
from shardscope.backend.sharding.mesh import Mesh

# x sharded on its contracting dimension: the dot's partial sums need an all-reduce.
SUMMED = """
module @m {
  sdy.mesh @mesh = <["data"=2]>
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}]>},
                         %arg1: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
      -> tensor<4x2xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32> loc("dot")
    return %0 : tensor<4x2xf32>
  }
}
"""


def test_a_reports_collectives_are_matched_with_the_prediction_and_its_notes_kept():
    mesh = Mesh.from_dict({"data": 2})
    job = {"module": SUMMED, "mesh": mesh.to_json(), "arg_names": ["x", "w"], "runs": 2}
    report = run_module_job(job, None)
    assert report["ok"], report
    program = Program("m", "m.mlir", "mlir", None, SUMMED)
    parse_program_text(program, "m.mlir")
    predicted = propagate(program, mesh)
    result = report_result("m", mesh, report, "", ["the inputs are seeded"], predicted)
    assert result.program == "m" and result.device_order == [0, 1]
    assert [c.kind for c in result.collectives] == ["all-reduce"]
    assert predicted.collectives and result.collectives[0].predicted
    # In propagate's form: its mesh axes and why it is there, read as the compile reads it.
    (c,) = result.collectives
    assert c.axes == ("data",) and c.origin == "partitioner" and c.cause.kind == "rule"
    assert list(result.collectives) == list(read_compile(predicted, report).collectives)
    assert not result.predicted_only
    assert result.notes[0] == "the inputs are seeded" and len(result.run_times) == 2
    (out,) = result.outputs
    assert out.max_rel_error is not None and out.max_rel_error < 1e-6


def test_collectives_a_worker_explained_read_back_equal_through_json():
    mesh = Mesh.from_dict({"data": 2})
    job = {"module": SUMMED, "mesh": mesh.to_json(), "arg_names": ["x", "w"], "runs": 1}
    report = run_module_job(job, None)
    program = Program("m", "m.mlir", "mlir", None, SUMMED)
    parse_program_text(program, "m.mlir")
    predicted = propagate(program, mesh)
    carried = json.loads(json.dumps(explained_json(predicted, report)))
    direct = report_result("m", mesh, report, "", [], predicted)
    read = report_result("m", mesh, {**report, "explained": carried}, "", [], None)
    assert read.collectives == direct.collectives and read.collectives[0].cause is not None
    assert read.predicted_only == direct.predicted_only
    assert read_explained(carried) == (direct.collectives, direct.predicted_only)
