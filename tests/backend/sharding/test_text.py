"""HloSharding and Shardy text against JAX's own conversions, round trips and kinds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib import xla_client as xc
from jax.sharding import NamedSharding

from shardscope.backend.errors import MeshError, SpecError
from shardscope.backend.sharding.hlo_text import (
    hlo_sharding_text,
    maximal_text,
    parse_hlo_sharding,
    spec_from_hlo_sharding,
)
from shardscope.backend.sharding.kinds import hlo_kind, sharding_kind
from shardscope.backend.sharding.mesh import Mesh, parse_mesh
from shardscope.backend.sharding.sdy_text import (
    parse_sdy_mesh,
    parse_sdy_sharding,
    sdy_sharding_text,
)
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec
from tests.support.sharding_cases import jax_mesh, mesh_spec_rank


@st.composite
def cases(draw, max_devices: int = 64, manual: bool = False):
    """A random mesh, spec and rank (see ``sharding_cases.mesh_spec_rank``)."""
    return draw(mesh_spec_rank(max_devices, manual))


def jax_sharding(mesh: Mesh, spec: Spec) -> NamedSharding:
    return NamedSharding(jax_mesh(mesh), spec.to_jax())


def jax_physical_text(mesh: Mesh, spec: Spec, rank: int) -> str:
    """JAX's HloSharding with mesh positions swapped for device ids, printed by XLA."""
    h = jax_sharding(mesh, spec)._to_xla_hlo_sharding(rank)
    if mesh.is_iota or not h.is_tiled():
        return str(h)
    proto = h.to_proto()
    proto.iota_reshape_dims = []
    proto.iota_transpose_perm = []
    proto.tile_assignment_devices = [mesh.device_order[i] for i in h.tile_assignment_devices()]
    return str(xc.HloSharding.from_proto(proto))


@settings(max_examples=200, deadline=None)
@given(cases(manual=True))
def test_hlo_text_equals_jax_conversion(case):
    mesh, spec, rank = case
    expected = str(jax_sharding(mesh, spec)._to_xla_hlo_sharding(rank))
    assert hlo_sharding_text(mesh, spec, rank) == expected


@settings(max_examples=150, deadline=None)
@given(cases(manual=True))
def test_physical_hlo_text_equals_xla_explicit_form(case):
    mesh, spec, rank = case
    assert hlo_sharding_text(mesh, spec, rank, physical=True) == jax_physical_text(mesh, spec, rank)


def _size1_free(mesh: Mesh, spec: Spec, rank: int) -> Spec:
    """The spec HLO can express: axes of size 1 split nothing, so they drop out."""
    return Spec(
        tuple(
            DimSpec(tuple(a for a in d.axes if mesh.shape[a] > 1)) for d in spec.padded(rank).dims
        )
    )


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans())
def test_spec_hlo_spec_round_trip(case, physical):
    mesh, spec, rank = case
    text = hlo_sharding_text(mesh, spec, rank, physical=physical)
    assert spec_from_hlo_sharding(text, mesh, rank, physical=physical) == _size1_free(
        mesh, spec, rank
    )


@settings(max_examples=150, deadline=None)
@given(cases(), st.data())
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
@given(cases())
def test_sdy_text_matches_shardy_printer(case):
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import sdy

    mesh, spec, rank = case
    with ir.Context() as ctx:
        sdy.register_dialect(ctx)
        want = str(jax_sharding(mesh, spec)._to_sdy_sharding(rank).build({}))
        ours = sdy_sharding_text(mesh, spec, rank, inline=True)
        # JAX's lowering leaves the device order to the executable; compare on the axes.
        assert ours.replace(mesh.sdy_attr_body(), Mesh(mesh.axes).sdy_attr_body()) == want
        assert str(ir.Attribute.parse(ours)) == ours


def test_issue_example_texts():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    spec = parse_spec("data,_")
    assert hlo_sharding_text(mesh, spec) == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
    assert hlo_sharding_text(mesh, spec, physical=True) == (
        "{devices=[4,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
    )
    assert hlo_sharding_text(mesh, parse_spec("data,model"), physical=True) == (
        "{devices=[4,2]0,2,4,6,1,3,5,7}"
    )
    assert (
        hlo_sharding_text(parse_mesh("x=4,y=2"), parse_spec("y+x,_"))
        == "{devices=[8,1]<=[4,2]T(1,0)}"
    )
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


def test_hlo_special_forms():
    assert parse_hlo_sharding("{maximal device=3}").device == 3
    assert maximal_text(3) == "{maximal device=3}"
    assert hlo_kind("{maximal device=0}") == "maximal"
    assert hlo_kind("{replicated}") == "replicated"
    assert hlo_kind("{devices=[2,1,4]<=[8] last_tile_dim_replicate}") == "partially replicated"
    assert hlo_kind("{devices=[2,4]<=[8]}") == "tiled"
    one = parse_mesh("x=1")
    assert spec_from_hlo_sharding("{maximal device=0}", one, 2) == Spec.of(None, None)


def test_hlo_recovery_errors_name_the_fix():
    mesh = parse_mesh("data=4,model=2")
    with pytest.raises(SpecError, match="use a 1-device mesh"):
        spec_from_hlo_sharding("{maximal device=0}", mesh)
    with pytest.raises(MeshError, match="use the mesh the sharding was made for"):
        spec_from_hlo_sharding("{devices=[4]<=[4]}", mesh)
    with pytest.raises(SpecError, match="use the mesh \\(and device order\\) it was made for"):
        spec_from_hlo_sharding("{devices=[8]0,2,1,3,4,5,6,7}", mesh)
    with pytest.raises(SpecError, match="tuple shardings are not supported"):
        parse_hlo_sharding("{{replicated}, {replicated}}")
    with pytest.raises(SpecError, match="list one device per tile"):
        parse_hlo_sharding("{devices=[4]0,1,2}")
    with pytest.raises(SpecError, match="pass the sharding of this tensor"):
        spec_from_hlo_sharding("{devices=[4,2]<=[8]}", mesh, 3)


@pytest.mark.parametrize(
    ("mesh", "spec", "hlo", "torch"),
    [
        ("data=4,model=2", "_,data", "partially replicated", "partial"),
        ("data=4,model=2", "data,model", "tiled", "tiled"),
        ("data=4,model=2", "_,_", "replicated", "replicated"),
        ("data=1,model=8", "_,model", "tiled", "partial"),
        ("data=4,model=2,x=1", "data,model+x", "tiled", "tiled"),
        ("data=8,model=1", "model,_", "replicated", "partial"),
        ("x=1", "x", "replicated", "maximal"),
    ],
)
def test_kinds_both_ways(mesh, spec, hlo, torch):
    kind = sharding_kind(parse_mesh(mesh), parse_spec(spec))
    assert (kind.hlo, kind.torch_xla) == (hlo, torch)
    assert kind.differs == ({"partially replicated": "partial"}.get(hlo, hlo) != torch)
