"""All text forms of one sharding at once, as the inspector shows them."""

import pytest

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.hlo_text import hlo_sharding_text
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import parse_spec
from shardscope.backend.sharding.text_forms import sharding_texts

MESH = parse_mesh("data=4,model=2")


def test_every_form_of_a_tiled_spec():
    texts = sharding_texts(MESH, parse_spec("data,model"), 2)
    assert texts == {
        "jax": "P('data', 'model')",
        "sdy": '#sdy.sharding<@mesh, [{"data"}, {"model"}]>',
        "hlo": "{devices=[4,2]<=[8]}",
        "kind": "tiled",
    }


def test_hlo_form_numbers_devices_by_mesh_position():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    spec = parse_spec("data,_")
    assert sharding_texts(mesh, spec, 2)["hlo"] == hlo_sharding_text(mesh, spec, 2)


def test_kind_names_both_classifications_when_they_differ():
    texts = sharding_texts(parse_mesh("data=1,model=8"), parse_spec("_,model"), 2)
    assert texts["kind"] == "tiled (PyTorch/XLA: partial)"


def test_unknown_axis_is_reported_before_a_rank_mismatch():
    with pytest.raises(SpecError, match="unknown axis 'nope'"):
        sharding_texts(MESH, parse_spec("nope,_,_"), 2)


def test_torch_xla_form_is_the_spec_mark_sharding_takes():
    from shardscope.backend.sharding.text_forms import mark_sharding_text, torch_xla_spec_text

    assert torch_xla_spec_text(parse_spec("data"), 2) == '("data", None)'
    assert torch_xla_spec_text(parse_spec("data+model,_")) == '(("data", "model"), None)'
    assert torch_xla_spec_text([["model"]]) == '("model",)'
    assert torch_xla_spec_text([[], ["model"]], 3) == '(None, "model", None)'
    assert torch_xla_spec_text(parse_spec(""), 0) == "()"
    assert mark_sharding_text([["data"], []]) == 'xs.mark_sharding(t, mesh, ("data", None))'


def test_a_sub_axis_has_no_torch_xla_form():
    from shardscope.backend.sharding.text_forms import mark_sharding_text, torch_xla_spec_text

    assert torch_xla_spec_text([["data:(1)2"], []]) is None
    assert mark_sharding_text([["data:(1)2"], []]).startswith("(no PyTorch/XLA spec")


def test_the_torch_xla_text_is_given_only_when_asked():
    spec = parse_spec("_,model")
    assert "torch_xla" not in sharding_texts(MESH, spec, 2)
    texts = sharding_texts(MESH, spec, 2, torch_xla=True)
    assert texts["torch_xla"] == 'xs.mark_sharding(t, mesh, (None, "model"))'


def test_dtensor_placements_are_one_per_mesh_axis_in_the_meshs_order():
    from shardscope.backend.sharding.text_forms import dtensor_placements_text

    assert dtensor_placements_text(MESH, parse_spec("data"), 2) == "[Shard(0), Replicate()]"
    assert dtensor_placements_text(MESH, parse_spec("_,model"), 2) == "[Replicate(), Shard(1)]"
    # the mesh's order, not the spec's: model shards dim 0, data dim 1
    assert dtensor_placements_text(MESH, parse_spec("model,data")) == "[Shard(1), Shard(0)]"
    assert dtensor_placements_text(MESH, [[], []]) == "[Replicate(), Replicate()]"
    assert dtensor_placements_text(MESH, parse_spec(""), 0) == "[Replicate(), Replicate()]"


def test_a_dim_over_several_axes_is_sharded_by_each_of_them_in_the_meshs_order():
    from shardscope.backend.sharding.text_forms import dtensor_placements_text

    assert dtensor_placements_text(MESH, parse_spec("data+model,_")) == "[Shard(0), Shard(0)]"
    mesh = parse_mesh("pod=2,data=2,model=2")
    assert dtensor_placements_text(mesh, [["pod", "model"], ["data"]]) == (
        "[Shard(0), Shard(1), Shard(0)]"
    )
    text = dtensor_placements_text(MESH, parse_spec("model+data,_"))
    assert text.startswith("(no DTensor placements: dim 0 takes model, data in that order")


def test_a_sub_axis_has_no_dtensor_placements_and_an_unknown_axis_is_an_error():
    from shardscope.backend.errors import MeshError
    from shardscope.backend.sharding.text_forms import dtensor_placements_text

    text = dtensor_placements_text(MESH, [["data:(1)2"], []])
    assert text == "(no DTensor placements: a sub-axis names part of a mesh axis)"
    with pytest.raises(MeshError, match="mesh has no axis 'nope'"):
        dtensor_placements_text(MESH, [["nope"]])


def test_the_dtensor_text_comes_with_the_torch_xla_one():
    spec = parse_spec("model,_")
    assert "dtensor" not in sharding_texts(MESH, spec, 2)
    texts = sharding_texts(MESH, spec, 2, torch_xla=True)
    assert texts["dtensor"] == "[Replicate(), Shard(0)]"


def test_the_dtensor_spec_is_none_where_dtensor_has_no_placements():
    from shardscope.backend.sharding.text_forms import dtensor_spec_text

    assert dtensor_spec_text(MESH, [["data"], []]) == "[Shard(0), Replicate()]"
    assert dtensor_spec_text(MESH, [["data:(1)2"], []]) is None
    assert dtensor_spec_text(MESH, [["model", "data"]]) is None
