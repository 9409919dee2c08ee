"""The mesh editor: axis edits, presets, reordering devices, and large meshes."""

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QDrag
from PySide6.QtWidgets import QScrollArea

from shardscope.backend.sharding.mesh import PRESETS, parse_mesh
from shardscope.viewers.mesh.editor import MeshEditor


def make(qtbot, mesh):
    editor = MeshEditor()
    qtbot.addWidget(editor)
    editor.resize(460, 520)
    editor.set_mesh(mesh)
    edits, messages = [], []
    editor.meshEdited.connect(edits.append)
    editor.validationMessage.connect(messages.append)
    return editor, edits, messages


def test_rename_emits_new_mesh_and_keeps_shown_mesh(qtbot):
    mesh = parse_mesh("data=4,model=2", device_order="1,0,2,3,4,5,6,7")
    editor, edits, _ = make(qtbot, mesh)
    editor.table.item(1, 0).setText("tensor")
    assert len(edits) == 1
    assert edits[0].axis_names == ("data", "tensor")
    assert edits[0].device_order == mesh.device_order
    assert editor.mesh is mesh


def test_resize_with_spin_box(qtbot):
    editor, edits, _ = make(qtbot, parse_mesh("data=4,model=2"))
    editor.size_spin(0).setValue(8)
    assert edits[-1].describe() == "data=8,model=2"
    assert edits[-1].is_iota


def test_duplicate_name_shows_message_and_emits_nothing(qtbot):
    editor, edits, messages = make(qtbot, parse_mesh("data=4,model=2"))
    editor.table.item(1, 0).setText("data")
    assert edits == []
    assert "appears twice" in messages[-1]
    assert editor.message.isVisibleTo(editor) and "appears twice" in editor.message.text()
    editor.size_spin(0).setValue(0)
    assert edits == []


def test_size_zero_is_rejected(qtbot):
    editor, edits, messages = make(qtbot, parse_mesh("data=4,model=2"))
    editor.size_spin(1).setValue(0)
    assert edits == [] and "size" in messages[-1]
    editor.set_mesh(parse_mesh("data=4,model=2"))
    assert not editor.message.isVisibleTo(editor)


def test_add_and_remove_axis(qtbot):
    editor, edits, _ = make(qtbot, parse_mesh("data=4,model=2"))
    editor.add_button.click()
    assert edits[-1].axis_names == ("data", "model", "axis_2")
    editor.table.setCurrentCell(0, 0)
    editor.remove_button.click()
    assert edits[-1].axis_names == ("model",)


def test_preset(qtbot):
    editor, edits, _ = make(qtbot, parse_mesh("data=8"))
    name = "TPU 4x4 (v5e-16)"
    index = editor.preset_combo.findText(name)
    editor.preset_combo.activated.emit(index)
    assert edits == [PRESETS[name]]
    assert editor.preset_combo.currentIndex() == 0


def test_reorder_by_dropping_one_cell_on_another(qtbot):
    editor, edits, _ = make(qtbot, parse_mesh("data=4,model=2"))
    editor.grid.drop_device(0, 5)
    assert edits[-1].device_order == (5, 1, 2, 3, 4, 0, 6, 7)
    assert editor.mesh.is_iota


def test_reorder_with_mouse_drag(qtbot, monkeypatch):
    editor, edits, _ = make(qtbot, parse_mesh("data=4,model=2"))
    editor.show()
    qtbot.waitExposed(editor)
    grid = editor.grid
    source, target = grid.cell_rect(1).center(), grid.cell_rect(6).center()
    captured = {}

    def fake_exec(drag, *args):
        captured["mime"] = drag.mimeData()
        grid.drop_device(
            int(bytes(drag.mimeData().data("application/x-shardscope-device").data())),
            grid.position_at(target),
        )
        return Qt.DropAction.MoveAction

    monkeypatch.setattr(QDrag, "exec", fake_exec)
    qtbot.mousePress(grid, Qt.MouseButton.LeftButton, pos=source)
    qtbot.mouseMove(grid, source + QPoint(30, 30))
    assert "mime" in captured
    assert edits[-1].device_order == (0, 6, 2, 3, 4, 5, 1, 7)


def test_highlight_and_large_mesh_legible(qtbot, render_dir, count_colors):
    editor, _, _ = make(qtbot, PRESETS["TPU 16x16 (v5e-256)"])
    editor.resize(700, 700)
    editor.highlight_devices([17, 200])
    editor.show()
    qtbot.waitExposed(editor)
    assert editor.grid.font().pointSizeF() >= 8
    cell = editor.grid.cell_rect(255)
    assert cell.width() >= editor.grid.fontMetrics().horizontalAdvance("255") + 4
    image = editor.grab()
    image.save(str(render_dir / "mesh_editor_256.png"))
    assert count_colors(image) > 100
    editor.set_mesh(PRESETS["3-D pipe=4,data=4,model=4"])
    qtbot.wait(20)
    image = editor.grab()
    image.save(str(render_dir / "mesh_editor_3d.png"))
    assert len(editor.grid._cells) == 64


def _drag(qtbot, grid, source: int, target: int, monkeypatch) -> None:
    """Drag the device cell at mesh position ``source`` onto the one at ``target`` with the
    mouse (the drag's own event loop is replaced by its drop on ``target``)."""
    start, end = grid.cell_rect(source).center(), grid.cell_rect(target).center()

    def drop_at_target(drag, *args):
        grid.drop_device(
            int(bytes(drag.mimeData().data("application/x-shardscope-device").data())),
            grid.position_at(end),
        )
        return Qt.DropAction.MoveAction

    monkeypatch.setattr(QDrag, "exec", drop_at_target)
    qtbot.mousePress(grid, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(grid, start + QPoint(30, 30))
    qtbot.mouseRelease(grid, Qt.MouseButton.LeftButton, pos=end)


def test_in_the_window_a_captures_device_order_is_dragged_recompiled_and_undone(
    qtbot, tmp_path, monkeypatch
):
    from shardscope.app.window.main_window import MainWindow
    from tests.support.compile_oracle import loaded
    from tests.support.device_order import ORDER, jit_groups, module_text, placement, write_capture

    monkeypatch.setenv("SHARDSCOPE_UNSAVED", "discard")
    program = loaded("example:mlp")
    capture = write_capture(tmp_path / "cap.json", module_text(program), program.mesh)
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()

    def compiled():
        qtbot.waitUntil(
            lambda: (
                window.session.propagation is not None
                and not window.propagation.pending
                and not window.propagation.compiler.compiling
                and window.session.analysis.compiled_collectives is not None
            ),
            timeout=90_000,
        )
        result = window.session.analysis
        return [c.device_groups for c in result.compiled_collectives]

    def tiles():
        grid = window.inspector.tile_grid
        return {int(d): r for d, r in grid.tile_map.devices_json().items()}

    try:
        window.open_program(str(capture))
        qtbot.waitUntil(lambda: window.session.program is not None, timeout=60_000)
        editor = window.mesh_editor
        # The capture's own order, shown as such.
        assert editor.mesh.device_order == ORDER and "custom order" in editor.summary.text()
        assert compiled() == jit_groups(program, ORDER)
        x = window.session.graph.value_by_name("x")
        window.select_value(x.id)
        assert tiles() == placement(x.shape, [["data"], []], ORDER)
        # The user drags the device at position 1 onto the one at position 6.
        swapped = list(ORDER)
        swapped[1], swapped[6] = swapped[6], swapped[1]
        _drag(qtbot, editor.grid, 1, 6, monkeypatch)
        assert window.session.mesh.device_order == tuple(swapped)
        assert editor.mesh.device_order == tuple(swapped)
        groups = compiled()
        assert groups == jit_groups(program, swapped) and groups != jit_groups(program, ORDER)
        assert tiles() == placement(x.shape, [["data"], []], swapped)
        # Undo puts the capture's order back, and its compile.
        assert window.undo.qstack.canUndo()
        window.undo.qstack.undo()
        assert window.session.mesh.device_order == ORDER
        assert editor.mesh.device_order == ORDER
        assert compiled() == jit_groups(program, ORDER)
        assert tiles() == placement(x.shape, [["data"], []], ORDER)
    finally:
        window.close()
        window.runner.wait(30_000)


def host_edits(editor):
    hosts, dcn = [], []
    editor.hostsEdited.connect(hosts.append)
    editor.dcnEdited.connect(lambda axis, factor: dcn.append((axis, factor)))
    return hosts, dcn


def type_into(qtbot, spin, text: str) -> None:
    """Select the spin box's text, type ``text`` and press Enter, as a user does."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def test_a_typed_host_count_is_one_edit_and_one_that_does_not_split_is_refused(qtbot):
    editor, _, messages = make(qtbot, parse_mesh("data=4,model=2"))
    hosts, _ = host_edits(editor)
    editor.show()
    type_into(qtbot, editor.hosts_spin, "3")
    assert hosts == []
    assert "do not split evenly among 3 hosts" in editor.message.text()
    assert editor.message.isVisible() and messages[-1] == editor.message.text()
    assert editor.hosts_spin.value() == 1  # the boxes show the layout again
    type_into(qtbot, editor.hosts_spin, "2")
    assert hosts == [2] and editor.message.text() == ""


def test_hosts_along_an_axis_and_how_each_axis_lies(qtbot):
    from shardscope.backend.session.host_layout import HostLayout, with_factor

    mesh = parse_mesh("data=4,model=2")
    editor, _, _ = make(qtbot, mesh)
    hosts, dcn = host_edits(editor)
    assert [editor.link_text(r) for r in range(2)] == ["", ""]
    editor.set_hosts(HostLayout(2))
    assert [editor.link_text(r) for r in range(2)] == ["both", "ICI"]
    assert [editor.factor_spin(r).value() for r in range(2)] == [2, 1]
    assert editor.summary.text() == "8 devices" and editor.hosts_note.text() == "4 devices per host"
    assert editor.grid.boundaries() == [(2, 4), (3, 5)]
    editor.factor_spin(1).setValue(2)
    assert dcn == [("model", 2)]
    laid, layout = with_factor(mesh, HostLayout(2), "model", 2)
    editor.set_mesh(laid)
    editor.set_hosts(layout)
    assert editor.hosts_spin.value() == 4
    assert [editor.link_text(r) for r in range(2)] == ["both", "DCN"]
    editor.factor_spin(0).setValue(3)
    assert "3 hosts along data" in editor.message.text() and len(dcn) == 1
    assert editor.factor_spin(0).value() == 2 and hosts == []


def shown_in(port, grid, rect) -> bool:
    """Whether ``rect`` of ``grid`` lies inside the viewport ``port`` shows."""
    top_left = grid.mapTo(port, rect.topLeft())
    return port.rect().contains(QRect(top_left, rect.size()))


def in_sight(outer, editor, rect) -> bool:
    grid = editor.grid
    return shown_in(editor.scroll.viewport(), grid, rect) and shown_in(outer.viewport(), grid, rect)


def short_dock(qtbot, mesh):
    """A mesh editor in a scroll area too short to show its grid, as in the Mesh dock."""
    editor = MeshEditor()
    outer = QScrollArea()
    outer.setWidget(editor)
    outer.setWidgetResizable(True)
    qtbot.addWidget(outer)
    outer.resize(300, 240)
    editor.set_mesh(mesh)
    outer.show()
    qtbot.wait(20)
    return outer, editor


def test_outlined_cells_scroll_into_view_in_a_short_dock(qtbot):
    outer, editor = short_dock(qtbot, parse_mesh("data=8,model=8"))
    grid = editor.grid
    order = grid.mesh.device_order
    bottom, top = tuple(order[-8:]), tuple(order[:8])
    rect = grid.outlined_rect(set(bottom))
    assert not rect.isEmpty() and not in_sight(outer, editor, rect)
    # A chosen collective's groups in the grid's last row: the dock scrolls down to them.
    grid.set_groups([bottom[:4], bottom[4:]])
    qtbot.waitUntil(lambda: in_sight(outer, editor, rect))
    # A hovered tile's devices in the first row: back up.
    first = grid.outlined_rect(set(top[:2]))
    editor.highlight_devices(list(top[:2]))
    qtbot.waitUntil(lambda: in_sight(outer, editor, first))
    # Clearing the outline scrolls nothing.
    bars = (outer.verticalScrollBar().value(), editor.scroll.verticalScrollBar().value())
    editor.highlight_devices([])
    grid.set_groups([])
    qtbot.wait(20)
    assert (outer.verticalScrollBar().value(), editor.scroll.verticalScrollBar().value()) == bars


def test_outlined_cells_already_in_sight_scroll_nothing(qtbot):
    editor = MeshEditor()
    qtbot.addWidget(editor)
    editor.resize(300, 700)
    editor.set_mesh(parse_mesh("data=4,model=2"))
    editor.show()
    qtbot.wait(20)
    before = editor.scroll.verticalScrollBar().value()
    editor.grid.set_groups([(0, 1), (2, 3)])
    qtbot.wait(20)
    assert editor.scroll.verticalScrollBar().value() == before == 0
    rect = editor.grid.outlined_rect({0, 1, 2, 3})
    assert shown_in(editor.scroll.viewport(), editor.grid, rect)


def test_an_editor_given_the_session_follows_its_mesh_and_hosts_until_detached(qtbot):
    from shardscope.backend.session.document import Session
    from shardscope.backend.session.host_layout import HostLayout, with_count
    from shardscope.viewers.mesh.palette import SpecPalette

    session = Session()
    editor = MeshEditor(session=session)
    palette = SpecPalette(session=session)
    qtbot.addWidget(editor)
    qtbot.addWidget(palette)
    mesh = parse_mesh("data=4,model=2")
    session.set_mesh(mesh)
    assert editor.mesh == mesh
    assert [c.axis for c in palette.chips] == ["data", "model", None]
    two = with_count(mesh, HostLayout(), 2)
    session.set_hosts(two[1], two[0])
    assert editor.host_layout == session.hosts and editor.host_layout.count == 2
    editor.detach()
    palette.detach()
    session.set_mesh(parse_mesh("x=8"), prune=True)
    assert editor.mesh == two[0]
    assert [c.axis for c in palette.chips] == ["data", "model", None]
