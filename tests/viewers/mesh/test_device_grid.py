"""The device grid: cell layout per mesh rank, hit testing, and swap requests."""

from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.viewers.mesh.device_grid import MAX_DRAWN_DEVICES, WRAP_1D, DeviceGridView


def make(qtbot, mesh):
    grid = DeviceGridView()
    qtbot.addWidget(grid)
    grid.resize(600, 600)
    grid.set_mesh(parse_mesh(mesh))
    return grid


def test_one_cell_per_device_and_hit_testing(qtbot):
    grid = make(qtbot, "data=4,model=2")
    assert len(grid._cells) == 8
    for position in range(8):
        assert grid.position_at(grid.cell_rect(position).center()) == position
    assert grid.cell_rect(1).top() == grid.cell_rect(0).top()
    assert grid.cell_rect(2).top() > grid.cell_rect(0).top()


def test_1d_mesh_wraps_into_rows(qtbot):
    grid = make(qtbot, f"data={WRAP_1D + 4}")
    assert len(grid._cells) == WRAP_1D + 4
    assert grid.cell_rect(WRAP_1D).left() == grid.cell_rect(0).left()
    assert grid.cell_rect(WRAP_1D).top() > grid.cell_rect(0).top()


def test_too_many_devices_draws_no_cells(qtbot):
    grid = make(qtbot, "x=128,y=129")
    assert grid.mesh.size > MAX_DRAWN_DEVICES
    assert grid._cells == [] and grid.sizeHint().isEmpty()


def test_drop_requests_a_swap_of_two_distinct_cells(qtbot):
    grid = make(qtbot, "data=4,model=2")
    swaps = []
    grid.swapRequested.connect(lambda a, b: swaps.append((a, b)))
    grid.drop_device(0, 5)
    grid.drop_device(3, 3)
    grid.drop_device(None, 2)
    grid.drop_device(1, None)
    assert swaps == [(0, 5)]


def test_highlight_is_kept_as_given(qtbot):
    grid = make(qtbot, "data=4,model=2")
    grid.set_highlight({2, 3})
    assert grid._highlight == {2, 3}


def test_a_collectives_groups_are_outlined_each_in_its_colour(qtbot):
    from shardscope.backend.sharding.device_groups import device_groups

    grid = make(qtbot, "data=4,model=2")
    grid.show()
    groups = device_groups(grid.mesh, ["data"])
    grid.set_groups(groups)
    assert grid.groups == [(0, 2, 4, 6), (1, 3, 5, 7)]
    image = grid.grab().toImage()

    def edge(position):
        rect = grid.cell_rect(position)
        return image.pixelColor(rect.left() + 3, rect.center().y()).name()

    first, second = grid.group_color(0).name(), grid.group_color(1).name()
    assert first != second
    assert {edge(p) for p in (0, 2, 4, 6)} == {first.lower()}
    assert {edge(p) for p in (1, 3, 5, 7)} == {second.lower()}
    grid.set_groups([])
    assert grid.groups == []
    image = grid.grab().toImage()
    assert edge(0) != first.lower()
