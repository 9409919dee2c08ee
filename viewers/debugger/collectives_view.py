"""The collectives dock: the compiled program's collectives, each explained and priced, and
Shardy's prediction before compiling, each flagged matched or not.

Once XLA compiled the propagated program (``result.compiled_collectives``), the dock lists
one row per compiled collective instruction: kind, mesh axes, group size, operands, the
tensor it moves, its op and line, why it is there, bytes per device, the estimated time on
the chosen hardware, whether the user wrote it or the partitioner inserted it, and
whether Shardy's prediction has it. While the compile runs, or where it failed, the dock
shows the prediction, labelled as such. The prediction stays one click away either way.

On a mesh laid over several hosts (``result.hosts``, set by ``cost.traffic``) each row
says whether its device groups cross hosts (``crosses``, in the warning colour) or stay
within one, a compiled row the bytes one call sends across hosts (summed over all
devices, from the pricing), and a line below the table the bytes per step within and
across hosts and the seconds on each link; on one host those columns are hidden.

Given the session, the dock follows it itself: it shows the session's analysis (laid over
the hosts and priced, as the session keeps it) after each propagation, compile and
pricing (``events.propagation``, ``compiled``, ``priced``); a new pricing of the same
compile and hosts repaints only the time cells and cost lines. ``detach`` stops following.

The tables' columns and cells are declared in ``collective_columns``; the lines around
them are worded in ``collective_lines``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QTabBar,
    QTableWidget,
    QWidget,
)

from shardscope.backend.columns import Column
from shardscope.viewers.common.connections import Connections
from shardscope.viewers.common.fitted_combo import FittedCombo
from shardscope.viewers.common.layouts import column_layout
from shardscope.viewers.common.line_label import LineLabel
from shardscope.viewers.common.table_items import INDEX_ROLE, SORT_ROLE, column_table, set_row
from shardscope.viewers.debugger.chosen_collective import ChosenCollective
from shardscope.viewers.debugger.collective_columns import (
    ACROSS_COLUMN,
    BYTES_COLUMN,
    COMPILED,
    COMPILED_BYTES_COLUMN,
    COMPILED_COLUMNS,
    CROSSES,
    HOSTS_COLUMN,
    PREDICTED,
    PREDICTED_COLUMNS,
    PREDICTED_HOSTS_COLUMN,
    TIME_COLUMN,
    CompiledRow,
    PredictedRow,
)
from shardscope.viewers.debugger.collective_columns import main_op as main_op
from shardscope.viewers.debugger.collective_lines import (
    BYTES_HEADER_TIP,
    BYTES_LINE,
    DockLines,
    Pricing,
    compile_state,
    compiled_lines,
    predicted_lines,
    tab_texts,
)

if TYPE_CHECKING:
    from shardscope.backend.analysis.analysis import Analysis
    from shardscope.backend.propagation.predicted_collectives import Collective
    from shardscope.backend.run.result import CompiledCollective
    from shardscope.backend.session.document import Session

CROSSING = QColor("#C26A00")  # the crossing rows' Hosts cell, readable on light and dark
# The tabs above the table.
COMPILED_TAB, PREDICTED_TAB = 0, 1


def _table(columns: Sequence[Column], parent: QWidget) -> QTableWidget:
    table = column_table(columns, parent, QHeaderView.ResizeMode.Interactive)
    table.setSortingEnabled(True)
    table.setWordWrap(False)
    return table


def _mark_crossing(item) -> None:
    """Colour a ``crosses`` Hosts cell in the warning colour."""
    if item is not None and item.text() == CROSSES:
        item.setForeground(QBrush(CROSSING))


class CollectivesView(QWidget):
    """The collectives dock; see the module docstring.

    ``compiledSelected(index)`` gives the index in ``result.compiled_collectives`` of the
    compiled row the user chose, ``collectiveSelected(index)`` the index in
    ``result.collectives`` of the predicted one. ``hardwareChosen(name)``: the user picked
    another hardware profile. ``conflictRequested(index)`` and
    ``provenanceRequested(value)``: the chosen collective's links."""

    compiledSelected = Signal(int)
    collectiveSelected = Signal(int)
    hardwareChosen = Signal(str)
    conflictRequested = Signal(int)
    provenanceRequested = Signal(int)

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        session: Session | None = None,
        propagating: Callable[[], bool] = lambda: False,
    ) -> None:
        """``session``: follow its analysis; ``propagating()``: whether a propagation of
        its program is on its way while it has none (the status says so)."""
        super().__init__(parent)
        self.session = session
        self.propagating = propagating
        self.result: Analysis | None = None
        self.collectives: list[Collective] = []
        self.compiled: list[CompiledCollective] | None = None
        self.pricing: Pricing | None = None
        self.compiling = False
        self.hosts = 1  # the hosts the result's mesh is laid over
        self.chosen: int | None = None  # the compiled collective shown below the table
        # Cut at the dock's edge: a long header never widens the docks below the graph.
        self.header = LineLabel(self)
        self.header.setStyleSheet("font-weight: bold")
        top = self._build_top()
        self.status = LineLabel(self)
        # How bytes and times are worked out, always in sight above the table.
        self.meaning = LineLabel(self)
        self.meaning.setText(BYTES_LINE)
        self.meaning.setToolTip(BYTES_HEADER_TIP)
        self.compiled_table = _table(COMPILED, self)
        self.compiled_table.sortByColumn(COMPILED_BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
        self.compiled_table.itemSelectionChanged.connect(self._on_compiled_selection)
        self.table = _table(PREDICTED, self)
        self.table.sortByColumn(BYTES_COLUMN, Qt.SortOrder.DescendingOrder)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.stack = QStackedWidget(self)
        # Room for the header and a few rows however short the dock.
        self.stack.setMinimumHeight(104)
        self.stack.addWidget(self.compiled_table)
        self.stack.addWidget(self.table)
        self.detail = ChosenCollective(self)  # the chosen collective, below the table
        self.detail.conflictRequested.connect(self.conflictRequested)
        self.detail.provenanceRequested.connect(self.provenanceRequested)
        self._build_lines()
        # The tabs whole over the table they switch, the bytes' meaning cut beside them.
        tabs = QHBoxLayout()
        tabs.setContentsMargins(0, 0, 0, 0)
        tabs.addWidget(self.tabs)
        tabs.addWidget(self.meaning, 1)
        column_layout(
            self,
            [top, self.status, tabs, (self.stack, 1), self.detail.box]
            + [self.totals, self.traffic, self.memory],
            spacing=3,
        )
        self._want_prediction = False
        self._pending = False
        self.note = ""
        self.set_result(None)
        self._links = Connections()
        if session is not None:
            self._follow(session)

    def _follow(self, session: Session) -> None:
        ev = session.events
        for shown in (ev.propagation, ev.compiled):
            self._links.connect(shown, lambda _part: self.show_session())
        self._links.connect(ev.priced, lambda _analysis: self._on_priced())
        self.show_session()

    def detach(self) -> None:
        """Stop following the session."""
        self._links.close()

    def show_session(self) -> None:
        """Show the session's analysis as it is now: whether it compiles, and why not."""
        session = self.session
        assert session is not None
        analysis = session.analysis
        pending = analysis is None and session.program is not None and self.propagating()
        compiling, note = compile_state(analysis)
        pricing = analysis.pricing if analysis is not None else None
        self.set_result(analysis, pending=pending, compiling=compiling, pricing=pricing, note=note)

    def _on_priced(self) -> None:
        """The session's analysis priced again: only the prices where nothing else
        changed (another hardware profile), else the whole analysis."""
        assert self.session is not None
        analysis, shown = self.session.analysis, self.result
        if (
            analysis is None
            or shown is None
            or shown.propagation is not analysis.propagation
            or shown.compile is not analysis.compile
            or shown.traffic != analysis.traffic
        ):
            self.show_session()
            return
        self.result = analysis
        self.set_pricing(analysis.pricing)

    def _build_top(self) -> QHBoxLayout:
        """The header and the hardware picker, in one row; the two tabs, made here, are
        laid out above the table, each whole however narrow the dock (the header and the
        picker's label are cut first)."""
        self.tabs = QTabBar(self)
        for tab, (text, tip) in enumerate(tab_texts(None)):
            self.tabs.addTab(text)
            self.tabs.setTabToolTip(tab, tip)
        self.tabs.setDrawBase(False)
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideNone)
        self.tabs.setExpanding(False)
        self.tabs.currentChanged.connect(self._on_tab)
        self.hardware = FittedCombo(self)
        self.hardware.setToolTip("The hardware the estimated times and the memory fit are for")
        self.hardware.currentIndexChanged.connect(self._on_hardware)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.header, 1)
        top.addWidget(QLabel("Hardware:", self))
        top.addWidget(self.hardware)
        return top

    def _build_lines(self) -> None:
        """The totals, traffic and memory lines under the table."""
        self.totals = LineLabel(self)
        self.totals.setToolTip(BYTES_HEADER_TIP)
        self.traffic = LineLabel(self)
        self.traffic.setToolTip(
            "Bytes one call of the program sends, summed over all devices, that stay within "
            "a host and that cross hosts, and the estimated seconds on each link"
        )
        self.memory = LineLabel(self)
        self.memory.setToolTip(
            "compiled.memory_analysis() of the compile on fake CPU devices: XLA's buffer "
            "assignment for the CPU, which an accelerator's may differ from"
        )

    def sizeHint(self) -> QSize:
        # Shares the messages' place at the bottom: as short as the messages list.
        return QSize(400, 120)

    # -- filling --------------------------------------------------------------------------
    def set_profiles(self, profiles: Sequence[tuple[str, str]], current: str) -> None:
        """The hardware picker's entries (name, label) and the one chosen."""
        box = self.hardware
        box.blockSignals(True)
        box.clear()
        for name, label in profiles:
            box.addItem(label, name)
        index = box.findData(current)
        box.setCurrentIndex(max(index, 0))
        box.blockSignals(False)

    def set_result(
        self,
        result: Analysis | None,
        *,
        pending: bool = False,
        compiling: bool = False,
        pricing: Pricing | None = None,
        note: str = "",
    ) -> None:
        """List the collectives of ``result`` (None: none yet; ``pending``: one is being
        computed). ``compiling``: XLA is compiling it (the prediction is shown until it
        is done); ``pricing``: its compiled collectives priced for the chosen hardware;
        ``note``: why it is not compiled, where it will not be."""
        self.result = result
        self._pending = pending
        self.note = note
        self.collectives = list(result.collectives) if result is not None else []
        compiled = result.compiled_collectives if result is not None else None
        self.compiled = list(compiled) if compiled is not None else None  # type: ignore[arg-type]
        self.compiling = (
            bool(compiling)
            and result is not None
            and self.compiled is None
            and not result.compile_error
        )
        self.pricing = pricing if self.compiled is not None else None
        self.hosts = int(getattr(result, "hosts", 1) or 1) if result is not None else 1
        self._fill_predicted()
        self._fill_compiled()
        self._show_tab()
        self._clear_detail()

    def set_pricing(self, pricing: Pricing | None) -> None:
        """Reprice the compiled rows: only the time cells and the cost lines change."""
        self.pricing = pricing if self.compiled is not None else None
        table = self.compiled_table
        sorting = table.isSortingEnabled()
        table.setSortingEnabled(False)
        for r in range(table.rowCount()):
            row = self._compiled_row(int(table.item(r, TIME_COLUMN).data(INDEX_ROLE)))
            for col in (TIME_COLUMN, ACROSS_COLUMN):
                item, column = table.item(r, col), COMPILED[col]
                item.setText(column.cell(row))
                item.setData(SORT_ROLE, column.sort_key(row))
            table.item(r, TIME_COLUMN).setToolTip(row.time_tip)
        table.setSortingEnabled(sorting)
        self._fill_lines()

    def _compiled_row(self, index: int) -> CompiledRow:
        """Compiled collective ``index`` as its row reads it, priced where priced."""
        assert self.compiled is not None
        costs = self.pricing.collectives if self.pricing is not None else None
        cost = costs[index] if costs is not None else None
        return CompiledRow(
            self.compiled[index],
            self.result.graph if self.result is not None else None,
            cost.seconds_per_call if cost is not None else None,
            cost.bytes_across_hosts if cost is not None else None,  # type: ignore[attr-defined]
            self._time_tip(index),
        )

    def _predicted_row(self, index: int) -> PredictedRow:
        """Predicted collective ``index`` as its row reads it."""
        result = self.result
        matched = (result.predicted_matched if result is not None else None) or []
        crossing = getattr(result, "predicted_crossing", None) or []
        return PredictedRow(
            self.collectives[index],
            result.graph if result is not None else None,
            matched[index] if index < len(matched) else None,
            crossing[index] if index < len(crossing) else None,
        )

    def _fill(self, table: QTableWidget, columns: Sequence[Column], rows: list, hosts: int) -> None:
        """Fill ``table`` with ``rows``, one per collective, sorted as the user sorted it;
        its several-host columns shown only on several hosts."""
        table.blockSignals(True)
        table.setSortingEnabled(False)
        table.clearContents()
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            set_row(table, r, columns, row, r, row.tip)
            _mark_crossing(table.item(r, hosts))
        table.setSortingEnabled(True)
        table.blockSignals(False)
        for col, column in enumerate(columns):
            table.setColumnHidden(col, column.several_hosts and self.hosts < 2)
        table.resizeColumnsToContents()
        # Long tensor names and op lists are cut; their tooltips have them whole.
        header = table.horizontalHeader()
        for col, column in enumerate(columns):
            if column.max_width is not None:
                header.resizeSection(col, min(header.sectionSize(col), column.max_width))

    def _fill_predicted(self) -> None:
        rows = [self._predicted_row(i) for i in range(len(self.collectives))]
        self._fill(self.table, PREDICTED, rows, PREDICTED_HOSTS_COLUMN)

    def _fill_compiled(self) -> None:
        rows = [self._compiled_row(i) for i in range(len(self.compiled or []))]
        self._fill(self.compiled_table, COMPILED, rows, HOSTS_COLUMN)

    def _time_tip(self, index: int) -> str:
        pricing = self.pricing
        if pricing is None or self.compiled is None:
            return "Pick a hardware profile to estimate times"
        cost = pricing.collectives[index]
        return f"{pricing.label}: {cost.formula}\n{pricing.estimate}"

    def _show_tab(self) -> None:
        """The compiled table where there is one and the user did not ask for the
        prediction; else the prediction."""
        has_compiled = self.compiled is not None
        show_compiled = has_compiled and not self._want_prediction
        # Disabling the current tab moves to another: not the user's choice.
        self.tabs.blockSignals(True)
        for tab, (text, tip) in enumerate(tab_texts(self.result)):
            self.tabs.setTabText(tab, text)
            self.tabs.setTabToolTip(tab, tip)
        self.tabs.setTabEnabled(COMPILED_TAB, has_compiled)
        self.tabs.setCurrentIndex(COMPILED_TAB if show_compiled else PREDICTED_TAB)
        self.tabs.blockSignals(False)
        self.stack.setCurrentWidget(self.compiled_table if show_compiled else self.table)
        self.hardware.setEnabled(has_compiled)
        self._fill_lines()

    @property
    def showing_compiled(self) -> bool:
        """Whether the table shown is the compiled program's."""
        return self.stack.currentWidget() is self.compiled_table

    def _fill_lines(self) -> None:
        """The header, status, formulas, totals and memory lines for what is shown."""
        if self.showing_compiled:
            assert self.result is not None and self.compiled is not None
            lines = compiled_lines(self.result, self.compiled, self.pricing, self.hosts)
        else:
            lines = predicted_lines(
                self.result,
                compiled=self.compiled is not None,
                compiling=self.compiling,
                pending=self._pending,
                note=self.note,
                hosts=self.hosts,
            )
        self._show_lines(lines)

    def _show_lines(self, lines: DockLines) -> None:
        self.header.setText(lines.header)
        self.header.setToolTip(lines.header_tip)
        self.status.setText(lines.status)
        self.meaning.setText(lines.meaning)
        self.meaning.setToolTip(lines.meaning_tip)
        self.totals.setText(lines.totals)
        for label, text in ((self.traffic, lines.traffic), (self.memory, lines.memory)):
            label.setText(text)
            label.setVisible(bool(text))

    # -- choosing -------------------------------------------------------------------------
    def _clear_detail(self) -> None:
        self.detail.clear()
        self.chosen = None

    def show_groups(self, index: int, groups: list[tuple[int, ...]]) -> None:
        """Say which device groups predicted collective ``index`` runs in (outlined on the
        mesh)."""
        self._clear_detail()
        self.detail.show_predicted(self.collectives[index], groups)

    def show_compiled(self, index: int, groups: list[tuple[int, ...]]) -> None:
        """Explain compiled collective ``index``: its device groups (outlined on the mesh,
        as ``groups`` gives them), the sharding its tensor had and the one needed, why,
        and links to the conflict and the provenance that explain it."""
        assert self.compiled is not None
        graph = self.result.graph if self.result is not None else None
        self.detail.show_compiled(self.compiled[index], groups, graph)
        self.chosen = index

    def select(self, index: int) -> None:
        """Choose the row of ``result.collectives[index]`` (the prediction)."""
        self._select_in(self.table, index)

    def select_compiled(self, index: int) -> None:
        """Choose the row of ``result.compiled_collectives[index]``."""
        self._select_in(self.compiled_table, index)

    def _select_in(self, table: QTableWidget, index: int) -> None:
        for r in range(table.rowCount()):
            if table.item(r, 0).data(INDEX_ROLE) == index:
                table.selectRow(r)
                return

    def show_prediction(self, on: bool) -> None:
        """Show Shardy's prediction (``on``) or the compiled collectives, where compiled."""
        self._want_prediction = bool(on)
        self._clear_detail()
        self._show_tab()

    def row_texts(self) -> list[list[str]]:
        """The cells of the table shown, as shown (hidden columns left out), top to bottom."""
        t = self.stack.currentWidget()
        assert isinstance(t, QTableWidget)
        shown = [c for c in range(t.columnCount()) if not t.isColumnHidden(c)]
        return [[t.item(r, c).text() for c in shown] for r in range(t.rowCount())]

    def column(self, name: str) -> list[str]:
        """The cells of the shown table's column ``name``, top to bottom."""
        t = self.stack.currentWidget()
        assert isinstance(t, QTableWidget)
        columns = COMPILED_COLUMNS if t is self.compiled_table else PREDICTED_COLUMNS
        col = columns.index(name)
        return [t.item(r, col).text() for r in range(t.rowCount())]

    def _on_tab(self, index: int) -> None:
        self.show_prediction(index == PREDICTED_TAB)

    def _on_hardware(self, index: int) -> None:
        name = self.hardware.itemData(index)
        if name is not None:
            self.hardwareChosen.emit(str(name))

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            self.collectiveSelected.emit(int(items[0].data(INDEX_ROLE)))

    def _on_compiled_selection(self) -> None:
        items = self.compiled_table.selectedItems()
        if items:
            self.compiledSelected.emit(int(items[0].data(INDEX_ROLE)))
