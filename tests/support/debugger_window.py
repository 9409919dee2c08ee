"""Finding the graph's items and choosing rows in the debugger's docks of a window under
test."""

from PySide6.QtCore import Qt

from shardscope.viewers.graph.items import NodeItem


def node_item(window, label: str) -> NodeItem:
    (item,) = [n for n in window.graph.nodes if n.node.label == label]
    return item


def marks(item, kind) -> list:
    return [c for c in item.childItems() if isinstance(c, kind)]


def click_tree_row(qtbot, tree, row: int) -> None:
    """Click row ``row`` where a user would: on its part in sight (a row wider than a
    narrow list runs past its right edge)."""
    rect = tree.visualItemRect(tree.topLevelItem(row)).intersected(tree.viewport().rect())
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def click_table_row(qtbot, table, row: int) -> None:
    rect = table.visualItemRect(table.item(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def selected_graph_items(window):
    return window.graph.scene().selectedItems()


def add_result(window) -> int:
    graph = window.session.graph
    (add,) = [op for op in graph.ops if op.short_name == "add"]
    return add.results[0]


def compiled_in(qtbot, window):
    """The window's current propagation once the window's XLA compile of it came."""
    qtbot.waitUntil(
        lambda: (
            window.session.propagation is not None
            and not window.propagation.pending
            and not window.propagation.compiler.compiling
            and (
                window.session.analysis.compiled_collectives is not None
                or window.session.analysis.compile_error is not None
            )
        ),
        timeout=90_000,
    )
    return window.session.analysis
