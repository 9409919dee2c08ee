"""Big graph pictures split into readable pages: cuts between rows, titles, page images."""

import pytest
from PySide6.QtCore import QRectF

from shardscope.viewers.graph import pages
from shardscope.viewers.graph.pages import (
    MIN_LABEL_PIXELS,
    TITLE_PIXELS,
    _cuts,
    label_pixels,
    page_image,
    plan_pages,
)


def test_cuts_fall_between_spans_and_bound_every_part():
    spans = [(0, 40), (60, 100), (120, 160), (180, 220)]
    cuts = _cuts(0, 220, 110, spans)
    assert cuts[0] == 0 and cuts[-1] == 220
    assert all(b - a <= 110 for a, b in zip(cuts, cuts[1:], strict=False))
    # no cut inside a span
    inner = cuts[1:-1]
    assert inner and all(not (lo < c < hi) for c in inner for lo, hi in spans)
    # one span longer than a page: cut through it rather than loop
    assert _cuts(0, 300, 100, [(0, 300)]) == [0, 100, 200, 300]
    assert _cuts(0, 80, 100, spans) == [0, 80]


def test_a_graph_that_fits_is_one_page(panel_for):
    _session, panel = panel_for("example:mlp")
    planned = plan_pages(panel.view, 1.5, "mlp")
    assert len(planned) == 1
    assert planned[0].source == panel.view.scene().sceneRect() and planned[0].title == "mlp"


def test_default_scale_keeps_labels_readable(panel_for):
    _session, panel = panel_for("example:mlp")
    assert label_pixels(panel.view, 1.5) >= MIN_LABEL_PIXELS
    assert label_pixels(panel.view, 0.4) < MIN_LABEL_PIXELS


def test_pages_cover_the_drawing_without_cutting_boxes(panel_for, monkeypatch):
    _session, panel = panel_for("example:transformer?layers=8")
    view = panel.view
    rect = view.scene().sceneRect()
    assert rect.height() > rect.width()
    monkeypatch.setattr(pages, "PAGE_PIXELS", 1500)
    planned = plan_pages(view, 1.5, "transformer")
    n = len(planned)
    assert n >= 2
    most = 1500 / 1.5
    for i, page in enumerate(planned, start=1):
        assert page.source.height() <= most + 1e-6 and page.source.width() <= most + 1e-6
        assert page.title.startswith("transformer — ") and page.title.endswith(f"page {i} of {n}")
    # bands stack from top to bottom of the drawing, each as wide as it
    tops = sorted({round(p.source.top(), 3) for p in planned})
    bottoms = sorted({round(p.source.bottom(), 3) for p in planned})
    assert tops[0] == round(rect.top(), 3) and bottoms[-1] == round(rect.bottom(), 3)
    assert tops[1:] == bottoms[:-1]
    cut_boxes = [
        item.node.label
        for item in view.nodes
        if any(
            item.sceneBoundingRect().top() < y < item.sceneBoundingRect().bottom() for y in tops[1:]
        )
    ]
    assert cut_boxes == []
    # each page names the top-level scopes it shows, first to last
    assert "— jvp() —" in planned[0].title and "— sgd —" in planned[-1].title
    assert any(" to transpose(jvp(" in p.title for p in planned)


def test_a_page_image_is_its_part_at_scale_under_a_title(panel_for, count_colors):
    _session, panel = panel_for("example:mlp")
    view = panel.view
    rect = view.scene().sceneRect()
    part = QRectF(rect.left(), rect.top(), rect.width(), rect.height() / 2)
    image = page_image(view, pages.Page(part, "mlp — x — page 1 of 2"), 2.0)
    assert image.width() == int(part.width() * 2)
    assert image.height() == int(part.height() * 2) + TITLE_PIXELS
    title = image.copy(0, 0, image.width(), TITLE_PIXELS)
    assert count_colors(title) > 2
    assert count_colors(image) > 20


def test_an_empty_view_is_a_value_error(qtbot):
    from shardscope.backend.session.document import Session
    from shardscope.viewers.graph.view import GraphView

    view = GraphView(Session())
    qtbot.addWidget(view)
    with pytest.raises(ValueError, match="empty"):
        plan_pages(view, 1.5, "nothing")


def test_fitting_scale_is_none_within_bounds_and_under_them_otherwise():
    from shardscope.viewers.graph.pages import MAX_MEGAPIXELS, MAX_PAGES, fitting_scale

    assert fitting_scale(1000, 1000, 1.0) is None
    assert fitting_scale(1000, 1000, 1.0, MAX_PAGES) is None
    # too many megapixels: a scale whose drawing takes fewer than MAX_MEGAPIXELS
    big = fitting_scale(40_000, 400_000, 1.0)
    assert big is not None and 40_000 * 400_000 * big**2 / 1e6 < MAX_MEGAPIXELS
    # too many pages: the scale shrunk as the pages are over
    few = fitting_scale(1000, 1000, 1.0, MAX_PAGES * 2)
    assert few is not None and few <= 0.5


def test_pages_are_saved_under_numbered_names(panel_for, tmp_path):
    from PySide6.QtGui import QImage

    from shardscope.viewers.graph.pages import paged_names, save_page

    assert [p.name for p in paged_names(tmp_path / "g.png", 3)] == ["g-1.png", "g-2.png", "g-3.png"]
    _session, panel = panel_for("example:mlp")
    (page,) = plan_pages(panel.view, 1.0, "mlp")
    save_page(panel.view, page, 1.0, tmp_path / "g-1.png")
    image = QImage(str(tmp_path / "g-1.png"))
    assert image.height() == int(page.source.height()) + TITLE_PIXELS
    with pytest.raises(OSError, match="Qt could not write"):
        save_page(panel.view, page, 1.0, tmp_path / "missing" / "g.png")
