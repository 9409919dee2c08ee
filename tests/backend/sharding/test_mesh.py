"""Meshes: construction, validation messages, presets and JAX/JSON/Shardy forms."""

import jax
import numpy as np
import pytest
from jax.sharding import AbstractMesh

from shardscope.backend.errors import MeshError
from shardscope.backend.sharding.mesh import (
    PRESETS,
    AxisType,
    Mesh,
    MeshAxis,
    parse_mesh,
    validate_for_devices,
)


def test_from_dict_and_properties():
    mesh = Mesh.from_dict({"data": 4, "model": 2})
    assert mesh.shape == {"data": 4, "model": 2}
    assert mesh.axis_names == ("data", "model")
    assert mesh.size == 8 and mesh.is_iota
    assert mesh.axis_types == (AxisType.AUTO, AxisType.AUTO)
    assert mesh.device_grid().tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert mesh == parse_mesh("data=4,model=2")


def test_device_order_grid_and_sdy_text():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7")
    assert mesh.device_grid()[2].tolist() == [1, 3]
    assert mesh.sdy_text() == (
        'sdy.mesh @mesh = <["data"=4, "model"=2], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>'
    )
    assert parse_mesh("a=2").sdy_text("m") == 'sdy.mesh @m = <["a"=2]>'


def test_json_round_trip():
    mesh = parse_mesh("a=2,b=3", [5, 4, 3, 2, 1, 0], "Explicit,Manual")
    assert Mesh.from_json(mesh.to_json()) == mesh
    assert Mesh.from_json({"axes": [{"name": "x", "size": 2}]}) == parse_mesh("x=2")


def test_to_jax_and_back():
    mesh = parse_mesh("data=4,model=2", "0,2,4,6,1,3,5,7", "Explicit,Auto")
    jm = mesh.to_jax(jax.devices()[:8])
    assert [d.id for d in jm.devices.flat] == list(mesh.device_order)
    assert str(jm.axis_types[0]).endswith("Explicit")
    assert Mesh.from_jax(jm) == mesh
    am = mesh.to_jax_abstract()
    assert isinstance(am, AbstractMesh)
    assert tuple(am.axis_sizes) == (4, 2)
    assert Mesh.from_jax(am) == Mesh(mesh.axes, (), mesh.axis_types)


@pytest.mark.parametrize(
    ("build", "fix"),
    [
        (lambda: Mesh(()), "give at least one, e.g. data=8"),
        (lambda: Mesh((MeshAxis("", 2),)), "name every axis"),
        (lambda: parse_mesh("data=2,data=4"), "give each axis a distinct name"),
        (lambda: parse_mesh("data=0"), "give a size >= 1"),
        (lambda: parse_mesh("data=two"), "give a whole number >= 1"),
        (lambda: parse_mesh("data"), "write it as name=size"),
        (lambda: parse_mesh(""), "give axes as name=size"),
        (lambda: parse_mesh("x y=2"), "use letters, digits and _"),
        (lambda: parse_mesh("data=4", "0,1,1,2"), "give a permutation of 0..3, each id once"),
        (lambda: parse_mesh("data=4", "0,1,2"), "list each of the 4 device ids exactly once"),
        (lambda: parse_mesh("data=4", "0,1,2,9"), "give a permutation of 0..3"),
        (lambda: parse_mesh("data=4", "0,a"), "write it like 0,2,4,6"),
        (lambda: parse_mesh("a=2,b=2", None, "Auto"), "give one type per axis"),
        (lambda: parse_mesh("a=2", None, "Sideways"), "use one of Auto, Explicit, Manual"),
        (lambda: Mesh.from_json({"size": 3}), "give axes as"),
    ],
)
def test_validation_messages_name_the_fix(build, fix):
    with pytest.raises(MeshError) as info:
        build()
    message = str(info.value)
    assert fix in message and "\n" not in message


def test_validate_for_devices():
    mesh = parse_mesh("data=4,model=2")
    validate_for_devices(mesh, 8)
    with pytest.raises(
        MeshError, match="has 8 devices but 4 are attached: use axis sizes whose product is 4"
    ):
        validate_for_devices(mesh, 4)
    with pytest.raises(MeshError, match="product is 4"):
        mesh.to_jax(jax.devices()[:4])


def test_axis_lookup_names_known_axes():
    with pytest.raises(MeshError, match="use one of data, model"):
        parse_mesh("data=4,model=2").axis_index("x")


def test_presets_cover_common_slices():
    sizes = {tuple(m.axis_sizes) for m in PRESETS.values()}
    assert {(8,), (4, 2), (2, 2, 1), (2, 4), (4, 4, 4), (16, 16), (16, 16, 16)} <= sizes
    assert {len(m.axes) for m in PRESETS.values()} == {1, 2, 3}
    for name, mesh in PRESETS.items():
        assert mesh.is_iota and name
        assert np.array_equal(np.sort(mesh.device_grid(), axis=None), np.arange(mesh.size))


def test_a_mesh_of_astronomically_many_devices_is_one_line():
    # Two sizes of 4,000 digits each: their product has more digits than str() prints.
    with pytest.raises(MeshError) as info:
        parse_mesh("a=" + "9" * 4000 + ",b=" + "9" * 4000)
    assert "about 10^7999 devices" in str(info.value) and "\n" not in str(info.value)


def test_a_mesh_of_too_many_axes_is_one_error():
    from shardscope.backend.sharding.mesh import parse_mesh

    with pytest.raises(MeshError, match="give at most 32"):
        parse_mesh(",".join(f"a{i}=1" for i in range(300)))
    assert len(parse_mesh(",".join(f"a{i}=1" for i in range(32))).axes) == 32
