"""JSON forms read off dataclass fields: renames, omissions, conversions, nesting."""

import json
from dataclasses import dataclass, field

from shardscope.backend.json_form import JsonForm, from_json_form, json_field, json_form, plain


@dataclass(frozen=True)
class Leaf(JsonForm):
    name: str
    axes: tuple[str, ...]
    from_axes: tuple[str, ...] = json_field(key="from")
    hidden: bool = json_field(omit=True, default=True)


@dataclass
class Shout:
    """A dataclass without the mixin, nested in another."""

    word: str
    times: int = json_field(convert=lambda n: n * 2, default=1)


@dataclass
class Tree(JsonForm):
    label: str = json_field(convert=str.upper)
    dims: tuple[tuple[str, ...], ...] = ()
    leaves: list[Leaf] = field(default_factory=list)
    by_name: dict[str, tuple[int, ...]] = field(default_factory=dict)
    shout: Shout | None = None
    size: int | None = None


def test_fields_in_declaration_order_with_renames_and_omissions():
    leaf = Leaf("x", ("a", "b"), ("c",), hidden=False)
    got = leaf.to_json()
    assert got == {"name": "x", "axes": ["a", "b"], "from": ["c"]}
    assert list(got) == ["name", "axes", "from"]
    assert "hidden" not in got and "from_axes" not in got


def test_nested_forms_tuples_dicts_and_conversions():
    tree = Tree(
        "root",
        (("data",), (), ("model", "x:(2)2")),
        [Leaf("p", (), ("a",)), Leaf("q", ("b",), ())],
        {"operand-0": (0, 1)},
        Shout("hey", 3),
    )
    got = tree.to_json()
    assert list(got) == ["label", "dims", "leaves", "by_name", "shout", "size"]
    assert got["label"] == "ROOT"
    assert got["dims"] == [["data"], [], ["model", "x:(2)2"]]
    assert got["leaves"] == [
        {"name": "p", "axes": [], "from": ["a"]},
        {"name": "q", "axes": ["b"], "from": []},
    ]
    assert got["by_name"] == {"operand-0": [0, 1]}
    assert got["shout"] == {"word": "hey", "times": 6}
    assert got["size"] is None
    # Plain JSON all the way down: no tuple survives, and it serialises as is.
    assert json.loads(json.dumps(got)) == got


def test_json_form_without_the_mixin_and_plain_values():
    assert json_form(Shout("a")) == {"word": "a", "times": 2}
    assert plain((1, ("a", None), {"k": (True,)})) == [1, ["a", None], {"k": [True]}]
    assert plain(2.5) == 2.5 and plain("s") == "s" and plain(None) is None


def test_an_object_with_its_own_to_json_gives_that():
    class Custom:
        def to_json(self):
            return "custom"

    assert plain([Custom()]) == ["custom"]


@dataclass(frozen=True)
class Forest(JsonForm):
    dims: tuple[tuple[str, ...], ...] | None
    leaves: tuple[Leaf, ...] = ()
    by_name: dict[str, tuple[int, ...]] = field(default_factory=dict)
    shout: Shout | None = None
    size: int | None = None
    pair: tuple[int, str] = (0, "")


def test_a_json_form_reads_back_into_its_dataclass():
    forest = Forest(
        (("data",), ()),
        (Leaf("p", ("a",), ("b",), hidden=True),),
        {"k": (1, 2)},
        Shout("hey", 3),
        None,
        (4, "x"),
    )
    data = json.loads(json.dumps(forest.to_json()))
    back = from_json_form(Forest, data)
    # A converted field has no way back: it keeps its default; the rest is as it was.
    assert back == Forest(forest.dims, forest.leaves, forest.by_name, Shout("hey"), None, (4, "x"))
    assert isinstance(back.leaves[0], Leaf) and back.leaves[0].from_axes == ("b",)
    assert from_json_form(Forest, {"dims": None}) == Forest(None)
