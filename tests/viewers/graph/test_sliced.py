"""Drawings of large frames built in slices: the old drawing stays until the new one is
whole, cancelling or a change of view drops the job, a failing layout is reported."""


def _sliced(view, monkeypatch):
    monkeypatch.setattr("shardscope.viewers.graph.sliced.SLICE_OPS", 0)
    view.in_slices = True


def test_in_slices_the_old_drawing_stays_until_the_new_one_is_whole(panel_for, qtbot, monkeypatch):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    _sliced(view, monkeypatch)
    ran: list = []

    def runner(fn, done, failed):  # the window runs it in its pool
        ran.append(fn)
        done(fn(), 0.0)

    view.runner = runner
    old = view.layout_
    with qtbot.waitSignal(view.foldStarted) as started:
        view.expand_all()
    assert started.args == ["Unfolding every scope"]
    assert view.folding and view.layout_ is old and len(ran) == 1
    with qtbot.waitSignal(view.foldEnded, timeout=20_000) as ended:
        pass
    assert ended.args == ["done"] and not view.folding
    assert not any(n.kind == "scope" for n in view.layout_.nodes)
    assert view.view_state()["expanded"][session.graph.main]


def test_cancelling_a_drawing_in_slices_leaves_the_view_as_it_was(panel_for, qtbot, monkeypatch):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    _sliced(view, monkeypatch)
    old, state = view.layout_, view.state_key()
    view.expand_all()
    qtbot.wait(5)
    with qtbot.waitSignal(view.foldEnded) as ended:
        assert view.cancel_fold()
    assert ended.args == ["cancelled"]
    qtbot.wait(50)
    assert view.layout_ is old and view.state_key() == state
    assert view.graph_scene.staging is None and not view.cancel_fold()


def test_a_drawing_for_a_view_that_changed_meanwhile_is_dropped(panel_for, qtbot, monkeypatch):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    _sliced(view, monkeypatch)
    results = []

    def runner(fn, done, failed):  # reports after the user already moved on
        results.append((fn, done))

    view.runner = runner
    view.expand_all()
    scope = next(n.node.scope for n in view.nodes if n.node.kind == "scope")
    view.set_expanded(scope, True)  # the user unfolds one scope meanwhile
    mine = view.state_key()
    ((fn, done),) = results
    with qtbot.waitSignal(view.foldEnded) as ended:
        done(fn(), 0.1)
    assert ended.args == ["dropped"]
    assert view.state_key() == mine and scope in view.expanded()


def test_a_layout_that_fails_is_reported(panel_for, qtbot, monkeypatch):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    _sliced(view, monkeypatch)
    view.runner = lambda fn, done, failed: failed("MemoryError: out of memory")
    old = view.layout_
    with qtbot.waitSignal(view.foldEnded) as ended:
        view.expand_all()
    assert ended.args == ["MemoryError: out of memory"] and view.layout_ is old


def test_once_the_new_drawing_goes_in_it_is_finished_not_cancelled(panel_for, qtbot, monkeypatch):
    session, panel = panel_for("example:transformer?layers=2")
    view = panel.view
    _sliced(view, monkeypatch)
    monkeypatch.setattr("shardscope.viewers.graph.sliced.SHOW_SLICE_S", 0.0)
    seen = []
    showing = view.graph_scene.showing

    def first_step_checked(staged, budget):
        steps = showing(staged, budget)
        yield next(steps)
        # the items are going in: the old picture stays (no repaints), Esc is too late
        seen.append((view.viewport().updatesEnabled(), view.cancel_fold()))
        yield from steps

    monkeypatch.setattr(view.graph_scene, "showing", first_step_checked)
    outcomes = []
    view.foldEnded.connect(outcomes.append)
    view.expand_all()
    qtbot.waitUntil(lambda: bool(outcomes), timeout=20_000)
    assert seen == [(False, False)]
    assert outcomes == ["done"] and view.viewport().updatesEnabled()
    assert not any(n.kind == "scope" for n in view.layout_.nodes)
