from shardscope.backend.natural_order import natural_key, natural_sorted, scope_order


def test_numbers_sort_as_numbers():
    names = ["layer_10", "layer_2", "layer_1", "embed", "layer_23", "Layer_3", "head"]
    assert natural_sorted(names) == [
        "embed",
        "head",
        "layer_1",
        "layer_2",
        "Layer_3",
        "layer_10",
        "layer_23",
    ]


def test_digits_and_letters_mixed_and_ties():
    assert natural_sorted(["b2", "b10", "a", "b", "10", "9", "b02"]) == [
        "9",
        "10",
        "a",
        "b",
        "b02",
        "b2",
        "b10",
    ]
    # a total order: equal numbers with different spelling still compare
    assert natural_key("b02") != natural_key("b2")


def test_scope_paths_parents_first_then_natural():
    paths = ["layers_10", "layers_2/attn", "layers_2", "layers_10/mlp", "layers_2/mlp_11"]
    assert sorted(paths, key=scope_order) == [
        "layers_2",
        "layers_10",
        "layers_2/attn",
        "layers_2/mlp_11",
        "layers_10/mlp",
    ]
