"""The propagation pipeline: jaxlib's registered passes, cut in two, debug options on."""

from shardscope.backend.propagation.pipeline import pipeline_stages


def test_pipeline_is_the_registered_one_with_debug_on():
    propagate_passes, export = pipeline_stages()
    assert "sdy-user-priority-propagate{" in propagate_passes
    assert "debug-propagation-edge-sharding=true debug-sharding-origins=true" in propagate_passes
    assert "sdy-add-data-flow-edges" in propagate_passes
    assert export.rstrip(")").endswith("sdy-close-shardings")
