"""Program outline: ops grouped by name scope, and a filterable table of tensors.

Both lists follow the program graph they are given; the tensor table also shows each
value's current spec through a callable, so it never keeps a copy of the session. A large
program (thousands of ops) fills scope children only when a scope is expanded, and the
tensor table is a model over the graph, not one widget item per value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QHeaderView,
    QLineEdit,
    QTableView,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from shardscope.backend.natural_order import natural_sorted
from shardscope.viewers.common.elide import MiddleElideDelegate
from shardscope.viewers.common.value_text import type_text

if TYPE_CHECKING:
    from shardscope.backend.program.graph import ProgramGraph

OP_ROLE = Qt.ItemDataRole.UserRole + 1
SCOPE_ROLE = Qt.ItemDataRole.UserRole + 2
FILLED_ROLE = Qt.ItemDataRole.UserRole + 3
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1

_ROLES_SHOWN = ("arg", "result")


class TensorTableModel(QAbstractTableModel):
    """Rows: the graph's values (arguments and results first); columns: name, role,
    shape, spec. ``spec_text(value_id)`` supplies the spec column."""

    HEADERS = ("tensor", "role", "shape", "spec")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.graph: ProgramGraph | None = None
        self.rows: list[int] = []
        self.spec_text: Callable[[int], str] = lambda vid: ""

    def set_graph(
        self, graph: ProgramGraph | None, spec_text: Callable[[int], str] | None = None
    ) -> None:
        self.beginResetModel()
        self.graph = graph
        if spec_text is not None:
            self.spec_text = spec_text
        if graph is None:
            self.rows = []
        else:
            first = [v.id for v in graph.values if v.role in _ROLES_SHOWN]
            rest = [
                v.id for v in graph.values if v.role not in _ROLES_SHOWN and v.shape is not None
            ]
            self.rows = first + rest
        self.endResetModel()

    def specs_changed(self) -> None:
        """Repaint the spec column only."""
        if self.rows:
            self.dataChanged.emit(self.index(0, 3), self.index(len(self.rows) - 1, 3))

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.graph is None:
            return None
        value = self.graph.values[self.rows[index.row()]]
        if role == VALUE_ROLE:
            return value.id
        if role == Qt.ItemDataRole.ToolTipRole:
            where = f"\n{value.result_info}" if value.result_info else ""
            return f"{value.display_name}{where}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        column = index.column()
        if column == 0:
            return value.display_name
        if column == 1:
            return value.role
        if column == 2:
            return type_text(value)
        return self.spec_text(value.id)


class ProgramOutline(QWidget):
    """Two tabs: "Scopes" (ops grouped by name scope) and "Tensors" (a filterable table)."""

    opSelected = Signal(int)
    valueSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graph: ProgramGraph | None = None
        self.tabs = QTabWidget(self)
        self.tree = QTreeView()
        self.tree.setHeaderHidden(False)
        self.tree.setUniformRowHeights(True)
        self.tree_model = QStandardItemModel(0, 2, self)
        self.tree_model.setHorizontalHeaderLabels(["scope / op", "ops · shape"])
        self.tree.setModel(self.tree_model)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.expanded.connect(self._fill)
        # long scope names keep their end: transpose(jvp(…yer_10))
        self.tree.setItemDelegateForColumn(0, MiddleElideDelegate(self.tree))
        self.tree.clicked.connect(self._tree_clicked)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tensors by name, role or shape…")
        self.filter.setClearButtonEnabled(True)
        self.table_model = TensorTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.table_model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        # long key paths keep both ends: params…[3]['w_in']
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setItemDelegateForColumn(0, MiddleElideDelegate(self.table))
        # a wrapped cell elides only its last line, at the right: one line per cell
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            self.table.horizontalHeader().setSectionResizeMode(
                column, QHeaderView.ResizeMode.ResizeToContents
            )
        self.table.clicked.connect(self._table_clicked)
        tensors = QWidget()
        box = QVBoxLayout(tensors)
        box.setContentsMargins(0, 4, 0, 0)
        box.addWidget(self.filter)
        box.addWidget(self.table)
        self.tabs.addTab(self.tree, "Scopes")
        self.tabs.addTab(tensors, "Tensors")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    # -- setters --------------------------------------------------------------------------
    def set_graph(
        self, graph: ProgramGraph | None, spec_text: Callable[[int], str] | None = None
    ) -> None:
        """Show ``graph`` (None clears); ``spec_text(value_id)`` fills the spec column."""
        self.graph = graph
        self.tree_model.removeRows(0, self.tree_model.rowCount())
        self.table_model.set_graph(graph, spec_text)
        if graph is None:
            return
        root = graph.scope_tree()
        self._add_scope_children(self.tree_model.invisibleRootItem(), root)

    def specs_changed(self) -> None:
        """The session's specs or propagation changed: refresh the spec column."""
        self.table_model.specs_changed()

    # -- tree ----------------------------------------------------------------------------
    def _add_scope_children(self, parent: QStandardItem, node) -> None:
        for name in natural_sorted(node.children):
            child = node.children[name]
            item = QStandardItem(name)
            item.setEditable(False)
            item.setData(child.path, SCOPE_ROLE)
            item.setData(False, FILLED_ROLE)
            count = QStandardItem(str(child.op_count()))
            count.setEditable(False)
            # a placeholder row makes the scope expandable before its children exist
            item.appendRow([QStandardItem(""), QStandardItem("")])
            item.setData(child, Qt.ItemDataRole.UserRole + 4)
            parent.appendRow([item, count])
        for op_id in node.ops:
            self._add_op(parent, op_id)

    def _add_op(self, parent: QStandardItem, op_id: int) -> None:
        op = self.graph.ops[op_id]
        first = self.graph.values[op.results[0]] if op.results else None
        label = op.short_name + (f" {first.ssa}" if first is not None else "")
        if op.callee:
            label += f" @{op.callee}"
        item = QStandardItem(label)
        item.setEditable(False)
        item.setData(op_id, OP_ROLE)
        if op.source_line:
            item.setToolTip(f"{op.name}  {op.source_file}:{op.source_line}")
        shape = QStandardItem(type_text(first) if first is not None else "")
        shape.setEditable(False)
        parent.appendRow([item, shape])

    def _fill(self, index: QModelIndex) -> None:
        item = self.tree_model.itemFromIndex(index)
        if item is None or item.data(FILLED_ROLE) is not False:
            return
        item.setData(True, FILLED_ROLE)
        item.removeRows(0, item.rowCount())
        self._add_scope_children(item, item.data(Qt.ItemDataRole.UserRole + 4))

    def _tree_clicked(self, index: QModelIndex) -> None:
        item = self.tree_model.itemFromIndex(index.siblingAtColumn(0))
        if item is not None and item.data(OP_ROLE) is not None:
            self.opSelected.emit(int(item.data(OP_ROLE)))

    def _table_clicked(self, index: QModelIndex) -> None:
        vid = self.proxy.data(index, VALUE_ROLE)
        if vid is not None:
            self.valueSelected.emit(int(vid))

    # -- queries for tests and views -------------------------------------------------------
    def scope_rows(self) -> dict[str, int]:
        """Top-level scope names with their op counts, as the tree shows them."""
        out = {}
        for row in range(self.tree_model.rowCount()):
            item = self.tree_model.item(row, 0)
            if item.data(SCOPE_ROLE) is not None:
                out[item.text()] = int(self.tree_model.item(row, 1).text())
        return out

    def expand_scope(self, name: str) -> list[str]:
        """Expand a top-level scope; the labels of its rows."""
        for row in range(self.tree_model.rowCount()):
            item = self.tree_model.item(row, 0)
            if item.text() == name:
                self.tree.expand(item.index())
                return [item.child(r, 0).text() for r in range(item.rowCount())]
        raise KeyError(name)
