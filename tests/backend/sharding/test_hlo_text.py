"""HloSharding text against JAX's own conversion and XLA's printer; reading specs back."""

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
from shardscope.backend.sharding.mesh import Mesh, parse_mesh
from shardscope.backend.sharding.spec import DimSpec, Spec, parse_spec
from tests.support.sharding_cases import jax_mesh, mesh_spec_rank


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
@given(mesh_spec_rank(manual=True))
def test_hlo_text_equals_jax_conversion(case):
    mesh, spec, rank = case
    expected = str(jax_sharding(mesh, spec)._to_xla_hlo_sharding(rank))
    assert hlo_sharding_text(mesh, spec, rank) == expected


@settings(max_examples=150, deadline=None)
@given(mesh_spec_rank(manual=True))
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
@given(mesh_spec_rank(), st.booleans())
def test_spec_hlo_spec_round_trip(case, physical):
    mesh, spec, rank = case
    text = hlo_sharding_text(mesh, spec, rank, physical=physical)
    assert spec_from_hlo_sharding(text, mesh, rank, physical=physical) == _size1_free(
        mesh, spec, rank
    )


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


def test_hlo_special_forms():
    assert parse_hlo_sharding("{maximal device=3}").device == 3
    assert maximal_text(3) == "{maximal device=3}"
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
