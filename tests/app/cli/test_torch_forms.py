"""A torch_xla program's shardings in its script's words: the mark_sharding spec and
DTensor's placements, for the CLI's text and JSON."""

from shardscope.app.cli.torch_forms import add_torch_forms, torch_forms, torch_forms_text
from shardscope.backend.sharding.mesh import parse_mesh

MESH = parse_mesh("data=4,model=2")


def test_both_forms_of_one_spec_and_none_where_a_form_has_none():
    assert torch_forms(MESH, [["model"], []]) == {
        "torch_xla": '("model", None)',
        "dtensor": "[Replicate(), Shard(0)]",
    }
    assert torch_forms(MESH, [["data:(1)2"]]) == {"torch_xla": None, "dtensor": None}
    # mark_sharding takes axes in any order; DTensor's placements cannot say this one
    assert torch_forms(MESH, [["model", "data"]]) == {
        "torch_xla": '(("model", "data"),)',
        "dtensor": None,
    }


def test_the_text_gives_the_forms_there_are_two_spaces_apart():
    assert torch_forms_text(MESH, [[], ["data"]]) == '(None, "data")  [Shard(1), Replicate()]'
    assert torch_forms_text(MESH, [["model", "data"]]) == '(("model", "data"),)'
    assert torch_forms_text(MESH, [["data:(1)2"]]) == ""


def test_json_values_get_their_specs_forms_and_differences_gspmds():
    data = {
        "values": [{"id": 0, "spec": [["data"], []]}, {"id": 1, "spec": [[]]}],
        "gspmd_differences": [
            {"id": 1, "shardy": [[]], "gspmd": [["model"]]},
            {"id": 2, "shardy": [[]], "gspmd": None},
        ],
    }
    out = add_torch_forms(data, MESH)
    first, second = out["values"]
    assert (first["torch_xla"], first["dtensor"]) == ('("data", None)', "[Shard(0), Replicate()]")
    assert (second["torch_xla"], second["dtensor"]) == ("(None,)", "[Replicate(), Replicate()]")
    known, unknown = out["gspmd_differences"]
    assert known["gspmd_torch_xla"] == '("model",)'
    assert known["gspmd_dtensor"] == "[Replicate(), Shard(0)]"
    assert "gspmd_dtensor" not in unknown and "torch_xla" not in known
