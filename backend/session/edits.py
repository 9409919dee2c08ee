"""Undoable edits of a ``Session``: plain-Python commands and a command stack.

Every edit the user makes (a drop of an axis on a tensor dimension, a new mesh) is a
``Command`` with ``do``/``undo``/``label``; the host count and the hosts along each axis
(``SetHosts``, ``SetDcn``) are edits too, and ``CompoundEdit`` makes several edits one.
``do`` validates before it changes anything, so an invalid edit raises
``SpecError``/``MeshError`` and leaves the session as it was.
The Qt side (``app/window/undo.py``) mirrors a ``CommandStack`` in a ``QUndoStack``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from psygnal import Signal

from shardscope.backend.errors import SpecError
from shardscope.backend.session.document import Session
from shardscope.backend.session.host_layout import HostLayout, fit_mesh, with_count, with_factor
from shardscope.backend.sharding.mesh import Mesh
from shardscope.backend.sharding.spec import DimSpec, Spec, spec_words


class Command:
    """One undoable edit of a session."""

    label: str = "edit"

    def do(self, session: Session) -> None:
        """Apply the edit; raise (changing nothing) if it is invalid."""
        raise NotImplementedError

    def undo(self, session: Session) -> None:
        """Revert exactly what ``do`` changed."""
        raise NotImplementedError


class _SpecCommand(Command):
    """Base for edits of one tensor's spec: remembers the old spec for undo.

    The label names the tensor and the whole spec before and after, so History shows
    what the edit did to the other dimensions too; ``label`` set by a subclass's
    ``__init__`` is the part that says what the user asked for.
    """

    def __init__(self, value_id: int) -> None:
        self.value_id = int(value_id)
        self._old: Spec | None = None
        self._named = False

    def new_spec(self, session: Session) -> Spec | None:
        """The spec the value gets; raise SpecError if the edit does not fit it."""
        raise NotImplementedError

    def do(self, session: Session) -> None:
        old = session.spec(self.value_id)
        new = self.new_spec(session)
        session.set_spec(self.value_id, new)  # validates before changing anything
        if not self._named:
            self.label = self.describe(session.value(self.value_id).display_name, old, new)
            self._named = True
        self._old = old

    def describe(self, name: str, old: Spec | None, new: Spec | None) -> str:
        """The History label of this edit of tensor ``name`` from ``old`` to ``new``."""
        return f"{name}: {spec_words(old)} -> {spec_words(new)} ({self.label})"

    def undo(self, session: Session) -> None:
        session.set_spec(self.value_id, self._old, validate=False)

    def _dims(self, session: Session, dim: int) -> list[DimSpec]:
        value = session.value(self.value_id)
        rank = value.rank
        if not 0 <= dim < rank:
            raise SpecError(f"{value.display_name} has rank {rank}: there is no dim {dim} to shard")
        current = session.spec(self.value_id)
        if current is None:
            # a first edit decides one dimension only: the others stay open, so
            # propagation still shards them as it did before the edit
            return [DimSpec(is_open=True)] * rank
        return list(current.padded(rank).dims)


class SetDimSpec(_SpecCommand):
    """Shard dimension ``dim`` of a tensor on ``axis``.

    A dim that already has axes gets ``axis`` in their place; with ``append`` it gets
    ``axis`` after them (minor), making a tuple such as ``data+model`` (after the axes the
    dim shows, when the user has given the tensor no spec yet). ``axis=None``
    makes the dim replicated. History says which: ``replace x dim 1: data → model`` or
    ``append model to x dim 1``.
    """

    def __init__(self, value_id: int, dim: int, axis: str | None, *, append: bool = False) -> None:
        super().__init__(value_id)
        self.dim = int(dim)
        self.axis = axis
        self.append = bool(append)
        self.label = f"dim {self.dim} = {axis}" if axis else f"dim {self.dim} replicated"
        self._was: tuple[str, ...] = ()

    def new_spec(self, session: Session) -> Spec:
        dims = self._dims(session, self.dim)
        if session.spec(self.value_id) is None:
            # the dimension the user dropped on is decided: only the others stay open
            dims[self.dim] = replace(dims[self.dim], is_open=False)
        if self.axis is None:
            # "replicated" is a decision too: an open empty dim would let propagation shard it
            dims[self.dim] = replace(dims[self.dim], axes=(), is_open=False)
            return Spec(tuple(dims))
        mesh = session.mesh
        if mesh is None:
            raise SpecError("there is no mesh yet: draw a mesh before sharding tensors")
        if self.axis not in mesh.axis_names:
            raise SpecError(
                f"axis {self.axis!r} is not in the mesh: use one of {', '.join(mesh.axis_names)}"
            )
        name = session.value(self.value_id).display_name
        old = dims[self.dim]
        if self.append and session.spec(self.value_id) is None:
            # no spec of the user's yet: append to the axes the dim shows (the program's
            # own sharding, or what propagation gave it)
            shown = session.display_spec(self.value_id)
            if shown is not None and self.dim < len(shown.dims):
                old = replace(old, axes=tuple(shown.dims[self.dim].axes))
        if not self.append and old.axes == (self.axis,):
            raise SpecError(
                f"dim {self.dim} of {name} is already sharded on {self.axis}: drop another "
                "axis to replace it, or hold Shift while dropping to add one"
            )
        for i, d in enumerate(dims):
            if self.axis in d.axes and (self.append or i != self.dim):
                raise SpecError(
                    f"axis {self.axis!r} already shards dim {i} of {name}: each axis splits "
                    f"a tensor once (clear dim {i} first)"
                )
        axes = old.axes + (self.axis,) if self.append else (self.axis,)
        self._was = old.axes
        dims[self.dim] = replace(old, axes=axes)
        return Spec(tuple(dims))

    def describe(self, name: str, old: Spec | None, new: Spec | None) -> str:
        if self.axis is None or not self._was:
            return super().describe(name, old, new)
        whole = f"({spec_words(old)} → {spec_words(new)})"
        was = "+".join(self._was)
        if self.append:
            now = "+".join((*self._was, self.axis))
            return (
                f"append {self.axis} to {name} dim {self.dim}: {was} → {now}, a tuple of "
                f"axes {whole}"
            )
        return f"replace {name} dim {self.dim}: {was} → {self.axis} {whole}"


class ClearDim(SetDimSpec):
    """Make one dimension replicated."""

    def __init__(self, value_id: int, dim: int) -> None:
        super().__init__(value_id, dim, None)


class SetDimOpen(_SpecCommand):
    """Mark a dimension open (propagation may shard it further) or closed."""

    def __init__(self, value_id: int, dim: int, is_open: bool) -> None:
        super().__init__(value_id)
        self.dim = int(dim)
        self.is_open = bool(is_open)
        self.label = f"dim {dim} {'open' if is_open else 'closed'}"

    def new_spec(self, session: Session) -> Spec:
        dims = self._dims(session, self.dim)
        dims[self.dim] = replace(dims[self.dim], is_open=self.is_open)
        return Spec(tuple(dims))


class SetDimPriority(_SpecCommand):
    """Give a dimension a user priority (``p0`` strongest) or none."""

    def __init__(self, value_id: int, dim: int, priority: int | None) -> None:
        super().__init__(value_id)
        self.dim = int(dim)
        if priority is not None and int(priority) < 0:
            raise SpecError(f"priority {priority} is negative: use p0 (strongest) or higher")
        self.priority = None if priority is None else int(priority)
        self.label = f"dim {dim} p{priority}" if priority is not None else f"dim {dim} no priority"

    def new_spec(self, session: Session) -> Spec:
        dims = self._dims(session, self.dim)
        dims[self.dim] = replace(dims[self.dim], priority=self.priority)
        return Spec(tuple(dims))


class SetSpec(_SpecCommand):
    """Replace a tensor's whole spec (``None`` removes the user's spec)."""

    def __init__(self, value_id: int, spec: Spec | None) -> None:
        super().__init__(value_id)
        self.spec = spec
        self.label = "set spec" if spec is not None else "remove spec"

    def new_spec(self, session: Session) -> Spec | None:
        return self.spec


class SetMesh(Command):
    """Replace the mesh; specs keep the axes the new mesh has and lose the others.

    ``notice`` names every spec that lost an axis (None when none did), for the user to
    read: a mesh change must not rewrite specs without a word. Undo restores mesh and
    specs together.
    """

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.label = f"mesh {mesh.describe()}"
        self.notice: str | None = None
        self._old_mesh: Mesh | None = None
        self._old_specs: dict[int, Spec] = {}
        self._old_hosts = HostLayout()

    def do(self, session: Session) -> None:
        self._old_mesh = session.mesh
        self._old_specs = dict(session.specs)
        self._old_hosts = session.hosts
        # The hosts follow the new mesh (``host_layout.fit_mesh``): a DCN layout reorders it.
        mesh, hosts, lost = fit_mesh(session.mesh, session.hosts, self.mesh)
        session.set_mesh(mesh, prune=True, hosts=hosts)
        self.notice = self._describe_losses(session)
        if lost:
            self.label += " (back to 1 host)"
            self.notice = (f"{self.notice} " if self.notice else "") + (
                f"Mesh {self.mesh.describe()}: {lost}. Undo (Ctrl+Z) restores the mesh and "
                "the hosts."
            )

    def _describe_losses(self, session: Session) -> str | None:
        names = set(self.mesh.axis_names)
        lost: list[str] = []
        changes: list[str] = []
        for vid, old in sorted(self._old_specs.items()):
            new = session.spec(vid)
            if new == old:
                continue
            lost += [a for a in old.used_axes + old.replicated if a not in names and a not in lost]
            name = session.value(vid).display_name
            changes.append(f"{name} {spec_words(old)} -> {spec_words(new)}")
        if not changes:
            return None
        axes = f"axes {', '.join(lost)}" if len(lost) > 1 else f"axis {lost[0]}"
        count = f"{len(changes)} specs" if len(changes) > 1 else "1 spec"
        self.label = f"mesh {self.mesh.describe()} ({count} lost {axes})"
        return (
            f"mesh {self.mesh.describe()} has no {axes}, so {count} lost "
            f"{'them' if len(lost) > 1 else 'it'}: {'; '.join(changes)}. "
            f"Undo (Ctrl+Z) restores the mesh and the specs."
        )

    def undo(self, session: Session) -> None:
        session.restore_mesh_and_specs(self._old_mesh, self._old_specs, self._old_hosts)


class _HostsCommand(Command):
    """Base for edits of the host layout: remembers the mesh and layout for undo (a DCN
    layout reorders the mesh's devices)."""

    def __init__(self) -> None:
        self._old_mesh: Mesh | None = None
        self._old_hosts = HostLayout()
        self._named = False

    def laid_out(self, mesh: Mesh, hosts: HostLayout) -> tuple[Mesh, HostLayout]:
        """The new mesh and layout; MeshError naming the fix if the edit does not fit."""
        raise NotImplementedError

    def do(self, session: Session) -> None:
        mesh, old = session.mesh, session.hosts
        if mesh is None:
            raise SpecError("there is no mesh yet: open a program before laying out hosts")
        new_mesh, hosts = self.laid_out(mesh, old)
        session.set_hosts(hosts, new_mesh)
        self._old_mesh, self._old_hosts = mesh, old
        if not self._named:
            self.label = f"{self.label}: {hosts_words(hosts, new_mesh)}"
            self._named = True

    def undo(self, session: Session) -> None:
        if self._old_mesh is not None:
            session.set_hosts(self._old_hosts, self._old_mesh)


def hosts_words(hosts: HostLayout, mesh: Mesh) -> str:
    """``2 hosts of 4 devices, DCN data=2`` as History shows it."""
    if hosts.count == 1:
        return f"1 host of {mesh.size} devices"
    each = mesh.size // hosts.count
    dcn = f", DCN {hosts.dcn_text}" if hosts.dcn is not None else ""
    return f"{hosts.count} hosts of {each} device{'s' if each != 1 else ''}{dcn}"


class SetHosts(_HostsCommand):
    """Lay the mesh over ``count`` hosts (``host_layout.with_count``)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.label = f"hosts {count}"

    def laid_out(self, mesh: Mesh, hosts: HostLayout) -> tuple[Mesh, HostLayout]:
        return with_count(mesh, hosts, self.count)


class SetDcn(_HostsCommand):
    """Lay ``factor`` hosts along ``axis`` (1: the axis stays within a host), the mesh in
    that hybrid order (``host_layout.with_factor``)."""

    def __init__(self, axis: str, factor: int) -> None:
        super().__init__()
        self.axis = axis
        self.factor = factor
        self.label = (
            f"{axis} within a host (ICI)" if factor == 1 else f"{factor} hosts along {axis} (DCN)"
        )

    def laid_out(self, mesh: Mesh, hosts: HostLayout) -> tuple[Mesh, HostLayout]:
        return with_factor(mesh, hosts, self.axis, self.factor)


class CompoundEdit(Command):
    """Several edits applied and undone as one: one History entry with one ``label``.

    The parts apply in order and undo in reverse order. If a part fails, the parts
    already applied are undone (latest first) before the error propagates, so the session
    is left exactly as it was. Redo applies every part again.
    """

    def __init__(self, label: str, parts: Sequence[Command]) -> None:
        if not parts:
            raise ValueError("a compound edit needs at least one part")
        self.label = label
        self.parts: tuple[Command, ...] = tuple(parts)

    def do(self, session: Session) -> None:
        applied: list[Command] = []
        try:
            for part in self.parts:
                part.do(session)
                applied.append(part)
        except BaseException:
            for part in reversed(applied):
                part.undo(session)
            raise

    def undo(self, session: Session) -> None:
        for part in reversed(self.parts):
            part.undo(session)


class CommandStack:
    """A linear undo/redo history of commands applied to one session."""

    changed = Signal()

    def __init__(self, session: Session) -> None:
        self.session = session
        self._undo: list[Command] = []
        self._redo: list[Command] = []

    def push(self, command: Command) -> Command:
        """Apply ``command``; on success record it (and drop the redo history)."""
        command.do(self.session)
        self._undo.append(command)
        self._redo.clear()
        self.changed.emit()
        return command

    def undo(self) -> Command | None:
        """Revert the last applied command, if any."""
        if not self._undo:
            return None
        command = self._undo.pop()
        command.undo(self.session)
        self._redo.append(command)
        self.changed.emit()
        return command

    def redo(self) -> Command | None:
        """Re-apply the last undone command, if any."""
        if not self._redo:
            return None
        command = self._redo.pop()
        command.do(self.session)
        self._undo.append(command)
        self.changed.emit()
        return command

    def clear(self) -> None:
        """Forget the history (after opening another program or session)."""
        self._undo.clear()
        self._redo.clear()
        self.changed.emit()

    @property
    def can_undo(self) -> bool:
        """Whether there is an applied command to undo."""
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """Whether there is an undone command to redo."""
        return bool(self._redo)

    @property
    def undo_labels(self) -> list[str]:
        """Labels of the applied commands, oldest first."""
        return [c.label for c in self._undo]
