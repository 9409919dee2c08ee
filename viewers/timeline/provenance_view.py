"""Provenance of a tensor's dimensions: the chain of steps behind each axis, as links.

``ProvenanceView`` shows ``DimProvenance`` records (computed by the backend): per axis,
the steps that carried it, newest first, back to the annotation it came from; for a
dimension without axes, why it is replicated. A step link emits ``stepClicked(index)``,
a tensor link ``valueClicked(value_id)``, a conflict link ``conflictClicked(i)``.

For a whole tensor it shows one short line per dimension (what it holds and whose
annotation that was, or that it is replicated), each with a link to the dimension's full
chain (``dimClicked(dim)``); for one dimension, that chain (``dimClicked(-1)``: back to
every dimension).

It says which time it explains, as the Tensor dock shows it: the final state, or a step
of the timeline, where it explains only what propagation had found by that step (an axis
that arrives later is named with the step it arrives at).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from shardscope.viewers.common.colors import axis_color, text_color_on
from shardscope.viewers.common.damage import quiet_change

if TYPE_CHECKING:
    from shardscope.backend.propagation.provenance import AxisChain, DimProvenance

SOURCES = {
    "user": "your spec",
    "code": "the code's annotation",
    "program": "the program's own sharding",
    "unknown": "an origin Shardy did not name",
}
HINT = "Select a tensor, then click one of its dimensions in the Tensor dock."


class ProvenanceView(QTextBrowser):
    """See the module docstring."""

    stepClicked = Signal(int)
    valueClicked = Signal(int)
    conflictClicked = Signal(int)
    dimClicked = Signal(int)  # a dimension's full chain; -1: every dimension, one line each

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        # always there: a scroll bar that comes and goes resizes, so repaints, the view
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.records: list[DimProvenance] = []
        self.links: list[str] = []
        self.html = ""
        self.show_html(f"<p>{HINT}</p>")

    def show_html(self, text: str) -> None:
        """Show ``text``; repaint only the part of the view that looks different."""
        if text == self.html:
            return
        self.html = text
        # the whole view, its scroll bar with it: a longer or shorter text moves the
        # bar's handle, which then repaints where it moved rather than the whole bar
        with quiet_change(self):
            self.setHtml(text)

    def show_message(self, text: str) -> None:
        self.records, self.links = [], []
        self.show_html(f"<p>{html.escape(text)}</p>")

    def set_records(
        self,
        title: str,
        records: Sequence[DimProvenance],
        name_of: Callable[[int], str],
        axis_names: tuple[str, ...],
        *,
        at_step: int | None = None,
        last_step: int | None = None,
        playing: bool = False,
        summary: bool = False,
        chosen: bool = False,
    ) -> None:
        """Show ``records`` for the tensor called ``title``; ``name_of(value_id)`` names
        the tensors along the chains. ``at_step``: explain the state after that timeline
        step (None: the final state, after ``last_step`` when given); ``playing``: the
        timeline plays on from there (the header says so); ``summary``: one line per
        record, each linking to its chain, instead of the chains; ``chosen``: the
        records are of one dimension the user picked (a link leads back to every one)."""
        self.records = list(records)
        self.links = []
        when = _when(at_step, last_step)
        if playing:
            when = f"{when}. Playing on from here: pause (space) to explain the step shown"
        out = [f"<h3>{html.escape(title)}</h3>", f"<p><i>{when}</i></p>"]
        if summary:
            for rec in records:
                out += self._record_html(rec, axis_names, at_step, short=True)
            self.show_html("".join(out))
            return
        for rec in records:
            out += self._record_html(rec, axis_names, at_step)
            chains = rec.chains
            if at_step is not None:
                chains = tuple(c for c in rec.chains if _arrival(c) <= at_step)
            for chain in chains:
                out += self._chain_html(chain, name_of, axis_names)
        if chosen:
            out.append(f"<p>{self._link('dim:-1', 'Every dimension')} of {html.escape(title)}</p>")
        self.show_html("".join(out))

    def _record_html(
        self,
        rec: DimProvenance,
        axis_names: tuple[str, ...],
        at_step: int | None,
        *,
        short: bool = False,
    ) -> list[str]:
        """What one dim holds at ``at_step`` (or why it is replicated), and the axes that
        arrive later; ``short``: whose annotation it holds, and a link to its chain in
        place of the reason it is replicated."""
        chains = rec.chains
        later: list[tuple[str, int]] = []
        if at_step is not None:
            chains = tuple(c for c in rec.chains if _arrival(c) <= at_step)
            later = [(c.axis, _arrival(c)) for c in rec.chains if _arrival(c) > at_step]
        out = []
        if rec.axes and not chains:
            out.append(f"<p><b>dim {rec.dim}</b> holds no axis yet</p>")
        elif rec.axes:
            chips = " ".join(_chip(c.axis, axis_names) for c in chains)
            whose = ""
            if short:
                sources = dict.fromkeys(SOURCES.get(c.source, c.source) for c in chains)
                how = self._link(f"dim:{rec.dim}", "How?")
                whose = f" from {html.escape(' and '.join(sources))}. {how}"
            out.append(f"<p><b>dim {rec.dim}</b> holds {chips}{whose}</p>")
        elif short:
            why = self._link(f"dim:{rec.dim}", "Why?")
            out.append(f"<p><b>dim {rec.dim}</b> is replicated. {why}")
            for i in rec.conflicts:
                out.append(" " + self._link(f"conflict:{i}", f"[conflict {i}]"))
            out.append("</p>")
        else:
            out.append(f"<p><b>dim {rec.dim}</b> is replicated. <i>Why?</i> ")
            out.append(html.escape(rec.replicated_because or ""))
            for i in rec.conflicts:
                out.append(" " + self._link(f"conflict:{i}", f"[conflict {i}]"))
            out.append("</p>")
        for axis, step in later:
            link = self._link(f"step:{step}", f"step {step}")
            out.append(f"<p>{_chip(axis, axis_names)} arrives later, at {link}</p>")
        return out

    def _chain_html(
        self, chain: AxisChain, name_of: Callable[[int], str], axis_names: tuple[str, ...]
    ) -> list[str]:
        """Where one axis came from: a list item per tensor it passed through."""
        out = [f"<p>{_chip(chain.axis, axis_names)} came from "]
        where = SOURCES.get(chain.source, chain.source)
        origin = f" ({html.escape(chain.origin)})" if chain.origin else ""
        out.append(f"{where}{origin}, each tensor from the next:</p><ol>")
        for n, link in enumerate(chain.links):
            tensor = self._link(f"value:{link.value}", name_of(link.value))
            if link.kind == "annotation":
                out.append(f"<li>{tensor} held {html.escape(link.axis)} from the start</li>")
                continue
            step = self._link(f"step:{link.step}", f"step {link.step}")
            src = ""
            # the tensor it came from is named when the next entry is not it
            after = chain.links[n + 1].value if n + 1 < len(chain.links) else None
            if link.source_value not in (None, link.value, after):
                src = " from " + self._link(
                    f"value:{link.source_value}", name_of(link.source_value)
                )
            note = " (not recorded by Shardy)" if link.kind == "unrecorded" else ""
            out.append(
                f"<li>{step}: {tensor} got it across {html.escape(link.op_name)}{src}{note}</li>"
            )
        out.append("</ol>")
        return out

    def _link(self, target: str, text: str) -> str:
        self.links.append(target)
        return f'<a href="{target}">{html.escape(text)}</a>'

    def activate(self, target: str) -> None:
        """Follow a link as a click would (``step:N``, ``value:V``, ``conflict:I``,
        ``dim:D``)."""
        kind, _, number = target.partition(":")
        if not number.lstrip("-").isdigit():
            return
        n = int(number)
        if kind == "step":
            self.stepClicked.emit(n)
        elif kind == "value":
            self.valueClicked.emit(n)
        elif kind == "conflict":
            self.conflictClicked.emit(n)
        elif kind == "dim":
            self.dimClicked.emit(n)

    def _on_anchor(self, url: QUrl) -> None:
        self.activate(url.toString())


def _when(at_step: int | None, last_step: int | None) -> str:
    if at_step is not None:
        return f"At step {at_step}: what propagation had found by then (as the Tensor dock shows)"
    if last_step is not None:
        return f"Final state, after the last step ({last_step})"
    return "Final state"


def _arrival(chain) -> int:
    """The step at which the chain's axis reached its tensor (-1: held from the start)."""
    first = chain.links[0] if chain.links else None
    if first is None or first.kind == "annotation" or first.step is None:
        return -1
    return first.step


def _chip(axis: str, axis_names: tuple[str, ...]) -> str:
    color = axis_color(axis_names, axis.split(":(")[0])
    return (
        f'<span style="background-color:{color.name()}; color:{text_color_on(color).name()}">'
        f"&nbsp;{html.escape(axis)}&nbsp;</span>"
    )
