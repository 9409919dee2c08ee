from PySide6.QtCore import Qt

from shardscope.backend.sharding.mesh import PRESETS, parse_mesh
from shardscope.viewers.common.colors import axis_color
from shardscope.viewers.common.mime import axis_from_mime
from shardscope.viewers.mesh.palette import SpecPalette


def test_chips_match_mesh_axes(qtbot):
    palette = SpecPalette()
    qtbot.addWidget(palette)
    mesh = parse_mesh("data=4,model=2")
    palette.set_mesh(mesh)
    assert [c.axis for c in palette.chips] == ["data", "model", None]
    assert [c.label for c in palette.chips] == ["data \u00d74", "model \u00d72", "replicated"]
    assert palette.chip("model").color == axis_color(mesh, "model")
    palette.set_mesh(parse_mesh("x=2,y=2,z=2"))
    assert [c.axis for c in palette.chips] == ["x", "y", "z", None]


def test_chip_mime_round_trips(qtbot):
    palette = SpecPalette()
    qtbot.addWidget(palette)
    palette.set_mesh(parse_mesh("data=4,model=2"))
    assert axis_from_mime(palette.chip("data").mime_data()) == (True, "data")
    assert axis_from_mime(palette.chip(None).mime_data()) == (True, None)


def test_palette_renders(qtbot, render_dir, count_colors):
    palette = SpecPalette()
    qtbot.addWidget(palette)
    palette.set_mesh(PRESETS["3-D pipe=4,data=4,model=4"])
    palette.resize(palette.sizeHint())
    image = palette.grab()
    image.save(str(render_dir / "spec_palette.png"))
    assert count_colors(image) > 6


def test_chips_wrap_in_a_narrow_dock_instead_of_overlapping(qtbot):
    from PySide6.QtWidgets import QDockWidget, QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    dock = QDockWidget("Spec palette", window)
    palette = SpecPalette()
    dock.setWidget(palette)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    window.resize(900, 600)
    dock.setMaximumWidth(260)  # the user narrowed the left column
    window.show()
    palette.set_mesh(parse_mesh("data=2,fsdp=2,model=2"))
    qtbot.waitUntil(lambda: all(c.isVisible() for c in palette.chips))
    qtbot.wait(50)
    rects = [c.geometry() for c in palette.chips]
    for i, a in enumerate(rects):
        assert palette.rect().contains(a), (a, palette.rect())
        for b in rects[i + 1 :]:
            assert not a.intersects(b), (a, b)
    assert len({r.y() for r in rects}) > 1  # wrapped onto a second row


def test_a_new_mesh_hides_the_old_chips_at_once(qtbot):
    palette = SpecPalette()
    qtbot.addWidget(palette)
    palette.show()
    palette.set_mesh(parse_mesh("data=4,model=2"))
    qtbot.waitUntil(lambda: all(c.isVisible() for c in palette.chips))
    old = list(palette.chips)
    palette.set_mesh(parse_mesh("data=2,fsdp=2,model=2"))
    # before the event loop deletes them, the old chips are already out of sight
    assert all(c.isHidden() for c in old)
    qtbot.waitUntil(lambda: all(c.isVisible() for c in palette.chips))
