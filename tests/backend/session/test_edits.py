"""Undoable commands on a session: valid edits change it, invalid ones change nothing."""

import pytest

from shardscope.backend.errors import ShardscopeError, SpecError
from shardscope.backend.program.load import load_program
from shardscope.backend.session.document import Session
from shardscope.backend.session.edits import (
    ClearDim,
    CommandStack,
    CompoundEdit,
    SetDcn,
    SetDimOpen,
    SetDimPriority,
    SetDimSpec,
    SetHosts,
    SetMesh,
    SetSpec,
)
from shardscope.backend.session.host_layout import HostLayout
from shardscope.backend.sharding.mesh import parse_mesh
from shardscope.backend.sharding.spec import Spec, parse_spec


@pytest.fixture(scope="module")
def mlp():
    return load_program("example:mlp")


@pytest.fixture
def session(mlp):
    s = Session()
    s.set_program(mlp)
    return s


def vid(session, name):
    return session.graph.value_by_name(name).id


def test_set_dim_and_tuple_and_undo(session):
    stack = CommandStack(session)
    x = vid(session, "x")
    assert session.spec(x) == Spec.of("data", None)
    seen = []
    session.events.specs.connect(seen.append)
    stack.push(SetDimSpec(x, 1, "model"))
    assert session.spec(x) == Spec.of("data", "model")
    assert seen == [(x,)]
    stack.undo()
    assert session.spec(x) == Spec.of("data", None)
    stack.redo()
    stack.push(ClearDim(x, 1))
    stack.push(SetDimSpec(x, 0, "model", append=True))  # appended: a tuple, major first
    assert session.spec(x) == Spec.of(("data", "model"), None)
    assert stack.undo_labels[-1] == (
        "append model to x dim 0: data → data+model, a tuple of axes ([data, _] → [data+model, _])"
    )
    while stack.can_undo:
        stack.undo()
    assert session.spec(x) == Spec.of("data", None)


def test_a_drop_on_a_sharded_dim_replaces_its_axes_and_undo_restores_them(session):
    stack = CommandStack(session)
    x = vid(session, "x")
    stack.push(SetDimSpec(x, 0, "model"))
    assert session.spec(x) == Spec.of("model", None)
    assert stack.undo_labels[-1] == "replace x dim 0: data → model ([data, _] → [model, _])"
    stack.push(SetDimSpec(x, 1, "data"))  # an empty dim: nothing is replaced
    assert stack.undo_labels[-1] == "x: [model, _] -> [model, data] (dim 1 = data)"
    stack.undo()
    stack.undo()
    assert session.spec(x) == Spec.of("data", None)
    # a tuple is replaced whole, by one of its own axes too
    stack.push(SetDimSpec(x, 0, "model", append=True))
    stack.push(SetDimSpec(x, 0, "model"))
    assert session.spec(x) == Spec.of("model", None)
    assert stack.undo_labels[-1] == (
        "replace x dim 0: data+model → model ([data+model, _] → [model, _])"
    )
    stack.undo()
    assert session.spec(x) == Spec.of(("data", "model"), None)


@pytest.mark.parametrize(
    "command, message",
    [
        (lambda x: SetDimSpec(x, 1, "data"), "already shards dim 0"),
        (lambda x: SetDimSpec(x, 0, "data"), "already sharded on data"),
        (lambda x: SetDimSpec(x, 0, "data", append=True), "already shards dim 0"),
        (lambda x: SetDimSpec(x, 0, "nope"), "not in the mesh"),
        (lambda x: SetDimSpec(x, 5, "model"), "no dim 5"),
    ],
)
def test_invalid_edit_changes_nothing(session, command, message):
    stack = CommandStack(session)
    x = vid(session, "x")
    before = dict(session.specs)
    fired = []
    session.events.specs.connect(fired.append)
    with pytest.raises(SpecError, match=message):
        stack.push(command(x))
    assert dict(session.specs) == before
    assert not stack.can_undo and not fired


def test_open_priority_and_whole_spec(session):
    stack = CommandStack(session)
    w1 = vid(session, "params['w1']")
    stack.push(SetDimOpen(w1, 0, True))
    stack.push(SetDimPriority(w1, 1, 1))
    assert session.spec(w1) == parse_spec("?,model@p1")
    stack.push(SetSpec(w1, None))
    assert session.spec(w1) is None
    stack.undo()
    stack.undo()
    assert session.spec(w1) == parse_spec("?,model")
    with pytest.raises(SpecError):
        stack.push(SetSpec(w1, parse_spec("data,data")))


def test_set_mesh_prunes_and_undo_restores(session):
    stack = CommandStack(session)
    w1 = vid(session, "params['w1']")
    meshes = []
    session.events.mesh.connect(meshes.append)
    stack.push(SetMesh(parse_mesh("data=8")))
    assert session.mesh.axis_names == ("data",)
    assert session.spec(w1) == Spec.of(None, None)
    stack.undo()
    assert session.mesh.axis_names == ("data", "model")
    assert session.spec(w1) == Spec.of(None, "model")
    assert len(meshes) == 2


def test_events_fire_only_on_real_change(session):
    x = vid(session, "x")
    fired = []
    session.events.specs.connect(fired.append)
    session.events.view.connect(fired.append)
    assert not session.set_spec(x, Spec.of("data", None))
    session.update_view(function="main")
    assert not session.update_view(function="main")
    assert len(fired) == 1


def test_a_first_edit_decides_one_dim_and_labels_say_the_whole_change(session):
    stack = CommandStack(session)
    b1 = vid(session, "params['b1']")
    w2 = vid(session, "params['w2']")
    h = next(v.id for v in session.graph.values if v.display_name == "layer1/dot_general %0")
    stack.push(SetDimSpec(h, 1, "model"))
    assert session.spec(h) == parse_spec("?,model")
    assert stack.undo_labels[-1] == "layer1/dot_general %0: no spec -> [?, model] (dim 1 = model)"
    stack.push(ClearDim(h, 0))
    assert session.spec(h) == parse_spec("_,model")
    assert stack.undo_labels[-1] == (
        "layer1/dot_general %0: [?, model] -> [_, model] (dim 0 replicated)"
    )
    stack.push(SetDimOpen(w2, 1, True))
    assert stack.undo_labels[-1] == "params['w2']: [model, _] -> [model, ?] (dim 1 open)"
    stack.push(SetDimPriority(b1, 0, 2))
    assert stack.undo_labels[-1] == "params['b1']: no spec -> [?@p2] (dim 0 p2)"
    stack.push(SetSpec(w2, None))
    assert stack.undo_labels[-1] == "params['w2']: [model, ?] -> no spec (remove spec)"


def test_a_mesh_change_keeps_fitting_specs_and_names_those_that_lost_axes(session):
    stack = CommandStack(session)
    specs = dict(session.specs)
    same_axes = stack.push(SetMesh(parse_mesh("data=2,model=4")))
    assert dict(session.specs) == specs and same_axes.notice is None
    fewer = stack.push(SetMesh(parse_mesh("data=8")))
    assert fewer.notice == (
        "mesh data=8 has no axis model, so 2 specs lost it: "
        "params['w1'] [_, model] -> [_, _]; params['w2'] [model, _] -> [_, _]. "
        "Undo (Ctrl+Z) restores the mesh and the specs."
    )
    assert session.spec(vid(session, "x")) == Spec.of("data", None)
    assert stack.undo_labels == ["mesh data=2,model=4", "mesh data=8 (2 specs lost axis model)"]
    stack.undo()
    assert dict(session.specs) == specs and session.mesh == parse_mesh("data=2,model=4")


def test_hosts_and_dcn_edits_undo_and_redo_with_the_mesh_order(session):
    stack = CommandStack(session)
    iota = session.mesh
    seen = []
    session.events.hosts.connect(seen.append)
    stack.push(SetHosts(2))
    assert session.hosts == HostLayout(2) and session.mesh == iota
    assert seen == [HostLayout(2)]
    stack.push(SetDcn("model", 2))
    layout = session.hosts
    assert layout.factors == {"data": 2, "model": 2} and session.mesh.device_order != iota
    assert stack.undo_labels == [
        "hosts 2: 2 hosts of 4 devices",
        "2 hosts along model (DCN): 4 hosts of 2 devices, DCN data=2,model=2",
    ]
    with pytest.raises(ShardscopeError, match="do not split evenly among 3 hosts"):
        stack.push(SetHosts(3))
    assert session.hosts == layout and len(stack.undo_labels) == 2
    stack.undo()
    assert session.hosts == HostLayout(2) and session.mesh == iota
    stack.redo()
    assert session.hosts == layout
    stack.undo()
    stack.undo()
    assert session.hosts == HostLayout() and session.mesh == iota


def test_a_mesh_the_host_count_does_not_split_goes_back_to_one_host_and_says_so(session):
    stack = CommandStack(session)
    stack.push(SetHosts(4))
    command = stack.push(SetMesh(parse_mesh("data=3,model=2")))
    assert session.hosts == HostLayout()
    assert "back to 1 host" in command.label and "back to 1 host" in command.notice
    stack.undo()
    assert session.hosts == HostLayout(4) and session.mesh == parse_mesh("data=4,model=2")


def test_appending_to_a_tensor_without_a_spec_appends_to_the_axes_it_shows(mlp):
    from shardscope.backend.propagation.propagate import propagate

    session = Session()
    session.set_program(mlp)
    session.set_propagation(propagate(mlp))
    stack = CommandStack(session)
    h = next(v.id for v in session.graph.values if v.display_name == "layer1/dot_general %0")
    assert session.spec(h) is None and session.spec_text(h) == "[data, model]"
    stack.push(SetDimSpec(h, 1, "data", append=True))
    assert session.spec(h) == parse_spec("?,model+data")
    assert stack.undo_labels[-1] == (
        "append data to layer1/dot_general %0 dim 1: model → model+data, a tuple of axes "
        "(no spec → [?, model+data])"
    )
    stack.undo()
    assert session.spec(h) is None


def test_a_compound_edit_is_one_step_of_undo_and_redo(session):
    stack = CommandStack(session)
    x, w1 = vid(session, "x"), vid(session, "params['w1']")
    before = dict(session.specs)
    stack.push(
        CompoundEdit(
            "accept proposal", [SetDimSpec(x, 1, "model"), SetSpec(w1, Spec.of("data", None))]
        )
    )
    after = {x: Spec.of("data", "model"), w1: Spec.of("data", None)}
    assert {v: session.spec(v) for v in after} == after
    assert stack.undo_labels == ["accept proposal"]
    stack.undo()
    assert dict(session.specs) == before and not stack.can_undo
    stack.redo()
    assert {v: session.spec(v) for v in after} == after
    assert stack.undo_labels == ["accept proposal"]


def test_a_compound_edit_whose_later_part_fails_leaves_the_session_as_it_was(session):
    stack = CommandStack(session)
    x, w1 = vid(session, "x"), vid(session, "params['w1']")
    stack.push(SetMesh(parse_mesh("data=2,model=4")))
    before, mesh = dict(session.specs), session.mesh
    compound = CompoundEdit(
        "accept proposal",
        [
            SetMesh(parse_mesh("data=8")),
            ClearDim(x, 0),
            SetDimSpec(x, 1, "data"),
            SetDimSpec(w1, 0, "nope"),
        ],
    )
    with pytest.raises(SpecError, match="not in the mesh"):
        stack.push(compound)
    assert dict(session.specs) == before and session.mesh == mesh
    assert stack.undo_labels == ["mesh data=2,model=4"]


def test_a_compound_edit_needs_a_part():
    with pytest.raises(ValueError, match="at least one part"):
        CompoundEdit("nothing", [])
