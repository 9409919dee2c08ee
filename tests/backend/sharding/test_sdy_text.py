"""Shardy sharding and mesh text: round trips, Shardy's own printer, and parse errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import sdy
from jax.sharding import NamedSharding

from shardscope.backend.errors import SpecError
from shardscope.backend.sharding.mesh import Mesh, parse_mesh
from shardscope.backend.sharding.sdy_text import (
    parse_sdy_mesh,
    parse_sdy_sharding,
    readable_spec,
    sdy_sharding_text,
)
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec
from tests.support.sharding_cases import jax_mesh, mesh_spec_rank


def jax_sharding(mesh: Mesh, spec: Spec) -> NamedSharding:
    return NamedSharding(jax_mesh(mesh), spec.to_jax())


@settings(max_examples=150, deadline=None)
@given(mesh_spec_rank(), st.data())
def test_spec_sdy_spec_round_trip(case, data):
    mesh, spec, rank = case
    dims = tuple(
        DimSpec(d.axes, data.draw(st.booleans()), data.draw(st.none() | st.integers(0, 3)))
        for d in spec.padded(rank).dims
    )
    unused = [a for a in mesh.axis_names if a not in spec.used_axes]
    full = Spec(
        dims, tuple(data.draw(st.lists(st.sampled_from(unused), unique=True)) if unused else ())
    )
    inline = data.draw(st.booleans())
    parsed = parse_sdy_sharding(sdy_sharding_text(mesh, full, inline=inline))
    assert parsed.spec == full
    if inline:
        assert parsed.mesh == Mesh(mesh.axes, mesh.device_order)
    else:
        assert parsed.mesh_name == "mesh"


@settings(max_examples=60, deadline=None)
@given(mesh_spec_rank())
def test_sdy_text_matches_shardy_printer(case):
    mesh, spec, rank = case
    with ir.Context() as ctx:
        sdy.register_dialect(ctx)
        want = str(jax_sharding(mesh, spec)._to_sdy_sharding(rank).build({}))
        ours = sdy_sharding_text(mesh, spec, rank, inline=True)
        # JAX's lowering leaves the device order to the executable; compare on the axes.
        assert ours.replace(mesh.sdy_attr_body(), Mesh(mesh.axes).sdy_attr_body()) == want
        assert str(ir.Attribute.parse(ours)) == ours


def test_issue_example_text():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    assert (
        sdy_sharding_text(mesh, parse_spec("data,model?"))
        == '#sdy.sharding<@mesh, [{"data"}, {"model", ?}]>'
    )


def test_parse_sdy_priorities_and_replicated():
    parsed = parse_sdy_sharding('#sdy.sharding<@m, [{"x", ?}p1, {}p0, {?}], replicated={"y"}>')
    assert parsed.mesh_name == "m"
    assert parsed.spec == Spec(
        (DimSpec(("x",), True, 1), DimSpec((), False, 0), DimSpec((), True)), ("y",)
    )
    bare = parse_sdy_sharding('<@mesh, [{"a", "b"}, {}]>')
    assert bare.spec == Spec.of(("a", "b"), None)


def test_sdy_errors_name_the_fix():
    with pytest.raises(SpecError, match="sub-axis 'x'.*not supported: use whole mesh axes"):
        parse_sdy_sharding('#sdy.sharding<@mesh, [{"x":(1)2}]>')
    with pytest.raises(SpecError, match="drop the unreduced= list"):
        parse_sdy_sharding('#sdy.sharding<@mesh, [{}], unreduced={"x"}>')
    with pytest.raises(SpecError, match="write it like #sdy.sharding"):
        parse_sdy_sharding('#sdy.sharding<@mesh, [{"x"}]')


def test_parse_sdy_mesh():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    assert parse_sdy_mesh(mesh.sdy_text()) == ("mesh", mesh)
    assert parse_sdy_mesh('#sdy.mesh<["x"=2]>') == (None, parse_mesh("x=2"))


def test_readable_spec_reads_one_shardy_sharding_only():
    assert readable_spec('#sdy.sharding<@mesh, [{"data"}, {}]>') == Spec.of("data", None)
    assert readable_spec("{devices=[4,1,2]<=[8] last_tile_dim_replicate}") is None
