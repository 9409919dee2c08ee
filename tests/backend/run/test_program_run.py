"""The run worker's stages: a mesh too large for the devices is refused in one line."""

from shardscope.backend.run.program_run import too_many_devices
from shardscope.backend.sharding.mesh import Mesh


def test_too_many_devices_names_both_numbers():
    message = too_many_devices(Mesh.from_dict({"data": 8}), 1, "gpu")
    assert message == (
        "the mesh data=8 needs 8 devices but 1 GPU device is attached: use a mesh of at most "
        "1 device (--mesh), or run where 8 are attached"
    )
