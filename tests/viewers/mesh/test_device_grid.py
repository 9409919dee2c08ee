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


def test_host_boundaries_lie_between_cells_of_different_hosts_and_are_painted(qtbot):
    from PySide6.QtGui import QColor

    from shardscope.backend.sharding.hosts import Hosts, hybrid_mesh
    from shardscope.viewers.common.colors import theme_for

    grid = make(qtbot, "data=4,model=2")
    grid.show()
    qtbot.waitExposed(grid)
    assert grid.boundaries() == [] and grid.host_text() == ""
    grid.set_hosts(Hosts(2, 8))
    # data=4 over 2 hosts: rows 0-1 on host 0, rows 2-3 on host 1
    assert grid.boundaries() == [(2, 4), (3, 5)]
    assert [grid.host_at(p) for p in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert grid.host_text() == "2 hosts, 4 devices each: h0 0–3 · h1 4–7"
    image = grid.grab().toImage()
    line = QColor(theme_for(grid).foreground).rgb()
    assert image.pixelColor(grid.boundary_rect(2, 4).center()).rgb() == line
    between_rows_of_one_host = grid.boundary_rect(0, 2).center()
    assert image.pixelColor(between_rows_of_one_host).rgb() != line
    # the hosts along model: every column step crosses, no row step does
    mesh, hosts = hybrid_mesh(grid.mesh, {"model": 2})
    grid.set_mesh(mesh)
    grid.set_hosts(hosts)
    assert grid.boundaries() == [(p, p + 1) for p in range(0, 8, 2)]
    grid.set_hosts(None)
    assert grid.boundaries() == [] and grid.hosts is None


def test_a_new_host_count_repaints_only_the_cells_whose_host_changed(qtbot):
    from shardscope.backend.sharding.hosts import Hosts

    class Recording(DeviceGridView):
        def __init__(self):
            super().__init__()
            self.painted = []

        def paintEvent(self, event):  # noqa: N802 - Qt's name
            self.painted.append(event.region())
            super().paintEvent(event)

    grid = Recording()
    qtbot.addWidget(grid)
    grid.resize(600, 600)
    grid.set_mesh(parse_mesh("data=8,model=2"))
    grid.set_hosts(Hosts(2, 16))
    grid.show()
    qtbot.waitExposed(grid)
    qtbot.wait(50)
    grid.painted.clear()
    grid.set_hosts(Hosts(4, 16))  # rows 0-3 stay on host 0, and rows 2-3 move to host 1
    qtbot.waitUntil(lambda: bool(grid.painted))
    region = grid.painted[0]
    for position in range(4):  # rows 0 and 1: the same host before and after
        assert not region.contains(grid.cell_rect(position).center())
    for position in range(4, 16):
        assert region.contains(grid.cell_rect(position).center())
    assert grid.host_at(4) == 1 and grid.host_at(15) == 3


def test_two_grids_follow_one_selection_until_detached(qtbot):
    from shardscope.backend.session.selection import Selection

    selection = Selection()
    selection.outline_groups([(0, 1)])
    first = make(qtbot, "data=4,model=2")
    first.follow(selection)
    second = DeviceGridView(selection=selection)
    qtbot.addWidget(second)
    second.set_mesh(parse_mesh("data=4,model=2"))
    assert first.groups == second.groups == [(0, 1)]  # what was outlined before
    selection.outline_groups([(0, 2), (1, 3)])
    selection.hover_devices([5])
    assert first.groups == second.groups == [(0, 2), (1, 3)]
    assert first._highlight == second._highlight == {5}
    second.detach()
    selection.clear_groups()
    assert first.groups == []
    assert second.groups == [(0, 2), (1, 3)]
