"""JAX's PartitionSpec text, checked against JAX's own repr where JAX can say it."""

from shardscope.backend.sharding.jax_text import jax_spec_text
from shardscope.backend.sharding.spec import parse_spec


def test_open_dims_and_tuples():
    assert jax_spec_text(parse_spec("data+model,?")) == "P(('data', 'model'), P.UNCONSTRAINED)"


def test_padded_to_rank():
    assert jax_spec_text(parse_spec("data"), 3) == "P('data', None, None)"
    assert jax_spec_text(parse_spec("")) == "P()"


def test_matches_jax_repr_for_closed_specs():
    for text in ("data,_", "data+model,_", "_,model", "x,y+z,_"):
        spec = parse_spec(text)
        assert jax_spec_text(spec) == repr(spec.to_jax())
