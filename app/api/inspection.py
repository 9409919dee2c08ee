"""``shardscope.inspect``: propagate shardings through a function in the caller's process.

The function is traced and lowered here, in the caller's own interpreter (its code and
arguments live here), on an abstract mesh unless the caller gave a concrete one: no
devices are needed, whatever the mesh's size. The lowered module then goes the way of a
loaded program file: ``propagate`` runs Shardy on it in a forked child, so the result, and
its ``to_json()``, are those ``propagate --json`` prints for the same program. Drawing the
graph (``_repr_svg_``) and the window (``show``) run in separate processes, so Qt never
loads into the caller's interpreter.
"""

from __future__ import annotations

import dataclasses
import html
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardscope.backend.analysis.analysis import Analysis
from shardscope.backend.errors import MeshError, ShardscopeError, SpecError, shortened
from shardscope.backend.program.load import Program, own_mesh, parse_program_text
from shardscope.backend.propagation.result import ValueInfo

# How long drawing the graph may take before ``_repr_svg_`` gives up.
DRAW_TIMEOUT = 120.0


@dataclass(frozen=True)
class Inspection(Analysis):
    """What ``shardscope.inspect`` returns: the analysis (propagation, compile, pricing),
    plus the program it ran on, a graph for notebooks and a window on demand."""

    loaded: Program | None = None

    def value(self, ref: int | str) -> ValueInfo:
        """A value by graph id or name: an argument by its name (an nnx Variable's by the
        user's path, ``model.w1``, or JAX's, ``model.w1.value``), a result as
        ``result[i]``, an intermediate as the window shows it. A name that matches none is
        a ``ShardscopeError`` naming the close ones."""
        by_id = {v.id: v for v in self.values}
        if isinstance(ref, int) and not isinstance(ref, bool) and ref in by_id:
            return by_id[ref]
        if isinstance(ref, str):
            found = self.graph.value_by_name(ref)
            if found is not None and found.id in by_id:
                return by_id[found.id]
            for v in self.values:
                if ref in (v.name, v.display_name):
                    return v
        shown = repr(ref) if len(repr(ref)) <= 80 else f"{repr(ref)[:60]}..."
        close = ", ".join(self.graph.close_names(str(ref)))
        raise ShardscopeError(
            f"{self.program} has no value {shown}: name an argument or result such as "
            f"{close}, or give a value id from 0 to {len(self.graph.values) - 1}"
        )

    def session_state(self) -> dict:
        """The session file's contents for this program, mesh and specs."""
        from shardscope.backend.session.document import Session

        session = Session()
        session.set_program(self.loaded)
        return dict(session.to_json())

    def save(self, path: str | os.PathLike) -> Path:
        """Save a session file (``python main.py gui FILE.json`` opens it)."""
        from shardscope.backend.session.persistence import write_json

        path = Path(path)
        write_json(path, self.session_state())
        return path

    def show(self) -> subprocess.Popen:
        """Open the shardscope window on this program in a new process; returns at once.

        The window gets the program as data (a session file), so nothing runs again."""
        folder = Path(tempfile.mkdtemp(prefix="shardscope-show-"))
        path = self.save(folder / f"{self.program}.json")
        return subprocess.Popen(
            [sys.executable, "-c", _CLI, "gui", str(path)],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def render_svg(self, scale: float = 1.0) -> str:
        """The program graph with its propagated shardings, as SVG text (drawn offscreen in
        a separate process)."""
        with tempfile.TemporaryDirectory(prefix="shardscope-draw-") as folder:
            session = self.save(Path(folder) / "session.json")
            out = Path(folder) / "graph.svg"
            env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
            try:
                proc = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "shardscope.app.api.draw",
                        str(session),
                        str(out),
                        str(scale),
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=DRAW_TIMEOUT,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired:
                raise ShardscopeError(
                    f"drawing the graph took over {DRAW_TIMEOUT:g} s; use .show() instead"
                ) from None
            if proc.returncode != 0 or not out.exists():
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise ShardscopeError(f"drawing the graph failed: {last}")
            return out.read_text()

    def _repr_svg_(self) -> str:
        return self.render_svg()

    def _repr_html_(self) -> str:
        n = len(self.timeline.steps)
        head = (
            f"<p><b>{html.escape(self.program)}</b>: mesh "
            f"{html.escape(', '.join(f'{k}={v}' for k, v in self.mesh.shape.items()))}, "
            f"{n} step{'s' * (n != 1)}, {len(self.conflicts)} conflict(s), "
            f"{len(self.collectives)} collective(s)</p>"
        )
        return head + f"<div>{self.render_svg()}</div>"

    def __repr__(self) -> str:
        return (
            f"<shardscope.Inspection {self.program}: mesh {self.mesh.shape}, "
            f"{len(self.values)} values, {len(self.timeline.steps)} steps, "
            f"{len(self.conflicts)} conflicts, {len(self.collectives)} collectives>"
        )


_CLI = "import sys; from shardscope.app.cli.main import run; run(sys.argv[1:])"


def _is_staged(fn: Any) -> bool:
    import jax

    return isinstance(fn, jax.stages.Lowered | jax.stages.Traced)


def _out_shardings(out_shardings: Any, mesh: Any) -> Any:
    """``out_shardings`` with each ``PartitionSpec`` on ``mesh`` (jit takes bare specs only
    inside ``jax.set_mesh``)."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from shardscope.backend.program.trace import abstract_mesh

    abstract = abstract_mesh(mesh) if not isinstance(mesh, jax.sharding.Mesh) else mesh

    def on_mesh(leaf: Any) -> Any:
        if leaf is None or isinstance(leaf, jax.sharding.Sharding):
            return leaf
        if not isinstance(leaf, PartitionSpec):
            raise SpecError(
                f"out_shardings holds {shortened(leaf)}: give PartitionSpecs, NamedShardings "
                f"or None, as jax.jit takes them"
            )
        if abstract is None:
            return leaf
        _check_out_spec(leaf, abstract)
        return NamedSharding(abstract, leaf)

    return jax.tree.map(
        on_mesh, out_shardings, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec)
    )


def _check_out_spec(spec: Any, abstract: Any) -> None:
    """``SpecError`` naming the fix where the output spec ``spec`` does not fit the mesh
    ``abstract`` (an axis it lacks, an axis used twice)."""
    from shardscope.backend.sharding.mesh import Mesh
    from shardscope.backend.sharding.spec import Spec, validate_spec

    mesh = Mesh.from_dict(dict(zip(abstract.axis_names, abstract.axis_sizes, strict=True)))
    try:
        validate_spec(Spec.from_jax(spec), mesh)
    except SpecError as exc:
        raise SpecError(f"out_shardings: {exc}") from None


def _device_order(own: dict[str, int], mesh: Any, device_order: Any) -> tuple[int, ...] | None:
    """The program's device order: ``device_order`` where given, else a concrete mesh's
    (where not 0, 1, 2...); ``MeshError`` naming the fix if it does not fit the mesh."""
    from shardscope.backend.sharding.mesh import Mesh, parse_ints

    if device_order is not None:
        if not isinstance(device_order, str):
            try:
                device_order = [_device_id(d) for d in device_order]
            except TypeError:
                shown = repr(device_order)
                shown = shown if len(shown) <= 60 else f"{shown[:40]}..."
                raise MeshError(
                    f"device_order={shown} is not a sequence of device ids: give e.g. "
                    f"device_order=[0, 2, 4, 6, 1, 3, 5, 7]"
                ) from None
        order = parse_ints(device_order, "device_order")
    else:
        import jax

        if not isinstance(mesh, jax.sharding.Mesh):
            return None
        order = Mesh.from_jax(mesh).device_order
        if sorted(order) != list(range(len(order))):
            # A mesh over some of the devices (ids 4..7): compiled on devices 0..N-1.
            return None
    checked = Mesh.from_dict(own, order)  # a MeshError where the order does not fit
    return None if checked.is_iota else checked.device_order


def _device_id(value: Any) -> int:
    """An int device id, or ``TypeError`` (a bool, a float, text are not ids)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(value)
    return int(value)


def inspect(
    fn: Any,
    *args: Any,
    mesh: Any = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
    hardware: Any = None,
    device_order: Any = None,
    hosts: int | None = None,
    dcn: Any = None,
    **kwargs: Any,
) -> Inspection:
    """Propagate shardings through ``fn(*args, **kwargs)`` as the compiler would.

    ``fn``: a function, a ``jax.jit`` object (its own shardings are the program's), an
    ``nnx.jit`` / ``eqx.filter_jit`` object, or a ``jax.stages.Lowered`` / ``Traced`` (then
    no arguments). ``args``: arrays or ``jax.ShapeDtypeStruct``; non-array leaves (the
    static parts of a Module) are closed over. ``mesh``: a dict of axis sizes, a
    ``jax.sharding.Mesh`` or an ``AbstractMesh`` (axis types kept); without it, the mesh of
    the shardings, else of ``jax.set_mesh``, else the one the program's own shardings use.
    ``in_shardings``: the user's specs, a pytree prefix of the positional arguments as
    ``jax.jit`` takes (``PartitionSpec`` or ``NamedSharding`` leaves, None unspecified) or
    a dict of argument names (``{"params['w1']": P(None, 'model')}``). ``out_shardings``:
    shardings the results must have, as ``jax.jit`` takes (part of the program).
    ``device_order``: the device id at each row-major position of the mesh (a sequence of
    ints such as ``[0, 2, 4, 6, 1, 3, 5, 7]``, or that text); without it, the order of a
    concrete ``mesh``'s devices, else 0, 1, 2... ``hardware``: the hardware profile (a name such as ``"h100"``) the compiled
    collectives and memory are priced for, ``cost`` in ``to_json()``; the default is
    ``propagate``'s, so both give the same answer. ``hosts`` and ``dcn`` lay the mesh over
    several hosts as ``propagate --hosts H --dcn AXIS=N`` does (``dcn``: that text or a
    dict such as ``{"data": 2}``; it sets the device order, so not with ``device_order``):
    the compiled collectives say whether they cross hosts, the pricing splits the traffic
    within and across hosts, and ``warnings`` name the layouts that keep them on a host.
    """
    from shardscope.backend.analysis.analyse import analyse
    from shardscope.backend.cost.hardware import profile

    hardware_profile = profile(hardware)
    traced = _traced(fn, args, kwargs, mesh, in_shardings, out_shardings)
    program = _program(traced, mesh, device_order)
    laid_hosts = None
    if hosts is not None or dcn:
        laid_hosts = _lay_over_hosts(program, hosts, dcn, device_order)
    analysis = analyse(program, hosts=laid_hosts, hardware=hardware_profile)
    fields = {f.name: getattr(analysis, f.name) for f in dataclasses.fields(Analysis)}
    return Inspection(**fields, loaded=program)


def _traced(fn: Any, args: tuple, kwargs: dict, mesh: Any, in_shardings: Any, out_shardings: Any):
    """``fn`` traced and lowered in this process (a staged one as it is)."""
    from shardscope.backend.program.trace import lower_function, lower_staged

    if _is_staged(fn):
        if args or kwargs or in_shardings is not None or out_shardings is not None:
            raise TypeError(
                "shardscope.inspect of a jax.stages.Lowered or Traced takes no arguments or "
                "shardings: they are fixed in it"
            )
        traced = lower_staged(fn)
        if mesh is not None:
            from shardscope.backend.program.trace import abstract_mesh, mesh_dict

            traced.mesh = mesh_dict(abstract_mesh(mesh))
        return traced
    if out_shardings is not None:
        if hasattr(fn, "trace"):
            raise TypeError(
                "fn is already jitted: give out_shardings to its jax.jit, not to inspect"
            )
        import jax

        fn = jax.jit(fn, out_shardings=_out_shardings(out_shardings, mesh))
        try:
            return lower_function(fn, args, kwargs, mesh=mesh, specs=in_shardings)
        except ValueError as exc:
            # jax's words for an out_shardings entry that does not fit its result's rank
            if "incompatible with its sharding annotation" not in str(exc):
                raise
            raise SpecError(
                f"out_shardings do not fit the results: {shortened(str(exc).splitlines()[0], 200, quote=False)}; "
                f"give each result a spec of at most its rank"
            ) from None
    return lower_function(fn, args, kwargs, mesh=mesh, specs=in_shardings)


def _program(traced: Any, mesh: Any, device_order: Any) -> Program:
    """The ``Program`` of a traced function, on its mesh in its device order."""
    program = Program(
        name=traced.name,
        source=f"{traced.name} (shardscope.inspect)",
        kind="api",
        path=None,
        mlir_text=traced.mlir_text,
        mesh=traced.mesh,
        specs=traced.specs,
    )
    parse_program_text(program, program.source)
    if program.mesh is None:
        program.mesh = own_mesh(program.mlir_text)
    if program.mesh is None:
        raise ShardscopeError(
            "no mesh: pass mesh= (a dict such as {'data': 4}, a Mesh or an AbstractMesh), "
            "shardings on a NamedSharding, or call inside `with jax.set_mesh(mesh):`"
        )
    program.device_order = _device_order(program.mesh, mesh, device_order)
    return program


def _lay_over_hosts(program: Program, hosts: int | None, dcn: Any, device_order: Any):
    """The hosts ``program``'s mesh lies over, its device order set as ``dcn`` lays it."""
    if dcn and device_order is not None:
        raise MeshError(
            "dcn lays out the device order itself: give dcn= or device_order=, not both"
        )
    if hosts is not None and (isinstance(hosts, bool) or not isinstance(hosts, int)):
        raise MeshError(
            f"hosts={shortened(hosts)} is not a whole number of hosts: give e.g. hosts=2"
        )
    from shardscope.backend.sharding.hosts import apply_hosts
    from shardscope.backend.sharding.mesh import Mesh

    own = Mesh.from_dict(dict(program.mesh), program.device_order)
    laid, laid_hosts = apply_hosts(own, hosts, dcn)
    program.device_order = None if laid.is_iota else laid.device_order
    return laid_hosts
