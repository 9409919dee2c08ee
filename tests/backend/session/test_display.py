"""What views show: the user's spec, else the propagated one, else the code's, else ``?``."""

from types import SimpleNamespace

import pytest

from shardscope.backend.program.load import load_program
from shardscope.backend.session.display import PropagatedSpecs
from shardscope.backend.session.document import Session
from shardscope.backend.sharding.spec import Spec, parse_spec
from tests.support.inputs import MLIR


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp")


@pytest.fixture(scope="module")
def constrained():
    """x and w annotated by the code, value 4 a sharding constraint, the rest unknown."""
    return load_program(str(MLIR / "sdy_constraint.mlir"))


def _result(specs):
    """A stand-in propagation result: final specs by value id, as ``values[].spec`` lists."""
    return SimpleNamespace(values=[SimpleNamespace(id=i, spec=s) for i, s in specs.items()])


def test_display_spec_prefers_user_then_code(mlp):
    s = Session()
    s.set_program(mlp)
    x = mlp.graph.value_by_name("x").id
    assert s.spec_text(x) == "[data, _]"
    assert s.origin(x) == "user"
    assert s.spec_text(mlp.graph.values[8].id) == "?"


def test_user_then_propagated_then_code_then_unknown(constrained):
    s = Session()
    s.set_program(constrained)
    assert not s.specs
    assert [s.origin(v) for v in range(6)] == ["code", "code", "none", "none", "code", "none"]
    assert s.spec_text(4) == "[model, _]" and s.spec_text(2) == "?"

    s.set_propagation(_result({2: [["data"], []], 4: [[], ["model"]], 5: [["data"]]}))
    assert [s.origin(v) for v in range(6)] == [
        "code",
        "code",
        "propagated",
        "none",
        "propagated",
        "propagated",
    ]
    assert s.display_spec(2) == Spec.of("data", None)
    assert s.display_spec(5) == Spec.of("data", None)  # padded to the value's rank
    assert s.spec_text(4) == "[_, model]"

    s.set_spec(4, Spec.of("data"))
    assert s.origin(4) == "user" and s.spec_text(4) == "[data, _]"
    assert s.propagation is None  # an edit makes the result stale
    assert s.origin(2) == "none"


def test_a_new_result_replaces_what_is_shown(constrained):
    s = Session()
    s.set_program(constrained)
    s.set_propagation(_result({2: [["data"], []]}))
    assert s.spec_text(2) == "[data, _]"
    s.set_propagation(_result({2: [[], ["model"]]}))
    assert s.spec_text(2) == "[_, model]"
    s.set_propagation(None)
    assert s.spec_text(2) == "?" and s.origin(2) == "none"


def test_propagated_specs_by_value_id():
    shown = PropagatedSpecs(_result({3: [["data", "model"], []], 7: []}))
    assert shown.get(3) == Spec.of(("data", "model"), None)
    assert shown.get(7) == Spec()
    assert shown.get(4) is None


def test_tiles_follow_the_propagation_result_over_the_users_spec(constrained):
    s = Session()
    s.set_program(constrained)
    s.set_spec(2, parse_spec("?,model"))
    assert s.laid_out_spec(2) == parse_spec("?,model")  # no result yet: what is shown
    s.set_propagation(_result({2: [["data"], ["model"]], 5: [["data"]]}))
    assert s.display_spec(2) == parse_spec("?,model")
    assert s.laid_out_spec(2) == Spec.of("data", "model")
    assert s.laid_out_spec(5) == Spec.of("data", None)  # padded to the value's rank
    assert s.laid_out_spec(0) == s.display_spec(0)  # not in the result: the code's
