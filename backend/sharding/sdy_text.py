"""Shardy's text: the single sharding attribute (``#sdy.sharding<...>``) and the mesh op.

Whole modules are parsed elsewhere with the MLIR bindings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shardscope.backend.errors import MeshError, ShardscopeError, SpecError
from shardscope.backend.sharding.mesh import Mesh, MeshAxis
from shardscope.backend.sharding.spec import DimSpec, Spec, validate_spec


def _dim_sdy(dim: DimSpec) -> str:
    parts = [f'"{a}"' for a in dim.axes] + (["?"] if dim.is_open else [])
    text = "{" + ", ".join(parts) + "}"
    return text if dim.priority is None else f"{text}p{dim.priority}"


def sdy_sharding_text(
    mesh: Mesh,
    spec: Spec,
    ndim: int | None = None,
    *,
    mesh_name: str = "mesh",
    inline: bool = False,
) -> str:
    """Shardy attribute text, e.g. ``#sdy.sharding<@mesh, [{"data"}, {"model", ?}p1]>``.

    ``inline=True`` writes the mesh in place (``mesh<["data"=4]>``) instead of ``@mesh_name``.
    """
    ndim = len(spec.dims) if ndim is None else ndim
    validate_spec(spec, mesh)
    spec = spec.padded(ndim)
    ref = "mesh" + mesh.sdy_attr_body() if inline else f"@{mesh_name}"
    text = f"#sdy.sharding<{ref}, [" + ", ".join(_dim_sdy(d) for d in spec.dims) + "]"
    if spec.replicated:
        text += ", replicated={" + ", ".join(f'"{a}"' for a in spec.replicated) + "}"
    return text + ">"


_TOKEN_RE = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<sym>@[A-Za-z0-9_.$-]+)|(?P<int>\d+)'
    r"|(?P<word>[#A-Za-z_][A-Za-z0-9_.]*)|(?P<punct>[<>\[\]{}(),=?:]))"
)


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []
        pos = 0
        stripped = text.rstrip()
        while pos < len(stripped):
            m = _TOKEN_RE.match(stripped, pos)
            if not m or m.end() == pos:
                self.fail(f"unexpected character {stripped[pos:].strip()[:1]!r}")
            kind = m.lastgroup or ""
            self.items.append((kind, m[kind]))
            pos = m.end()
        self.i = 0

    def fail(self, what: str) -> None:
        raise SpecError(
            f"cannot read Shardy text {self.text.strip()!r}: {what}; write it like "
            f'#sdy.sharding<@mesh, [{{"data"}}, {{}}]>'
        )

    def peek(self) -> str | None:
        return self.items[self.i][1] if self.i < len(self.items) else None

    def take(self, expected: str | None = None, kind: str | None = None) -> str:
        if self.i >= len(self.items):
            self.fail(f"it ends early (expected {expected or kind})")
        k, v = self.items[self.i]
        if (expected is not None and v != expected) or (kind is not None and k != kind):
            self.fail(f"expected {expected or kind} but found {v!r}")
        self.i += 1
        return v

    def accept(self, value: str) -> bool:
        if self.peek() == value:
            self.i += 1
            return True
        return False


def _axis_name(tok: _Tokens) -> str:
    name = tok.take(kind="str")[1:-1]
    if tok.peek() == ":":
        raise SpecError(
            f"sub-axis {name!r}:(...) in {tok.text.strip()!r} is not supported: "
            f"use whole mesh axes (split the axis into two mesh axes instead)"
        )
    return name


def _mesh_body(tok: _Tokens) -> Mesh:
    tok.take("<")
    tok.take("[")
    axes = []
    while not tok.accept("]"):
        name = tok.take(kind="str")[1:-1]
        tok.take("=")
        axes.append(MeshAxis(name, int(tok.take(kind="int"))))
        if not tok.accept(","):
            tok.take("]")
            break
    order: list[int] = []
    if tok.accept(","):
        tok.take("device_ids")
        tok.take("=")
        tok.take("[")
        while not tok.accept("]"):
            order.append(int(tok.take(kind="int")))
            tok.accept(",")
    tok.take(">")
    if not axes:
        raise MeshError("Shardy mesh has no axes (a maximal mesh): give a mesh with named axes")
    return Mesh(tuple(axes), tuple(order))


@dataclass(frozen=True)
class SdySharding:
    """A parsed ``#sdy.sharding``: the mesh it names (or an inline Mesh) and the Spec."""

    mesh_name: str | None
    mesh: Mesh | None
    spec: Spec


def parse_sdy_sharding(text: str) -> SdySharding:
    """Parse a Shardy sharding attribute (``#sdy.sharding<...>`` or the bare ``<@mesh, [...]>``).

    Sub-axes and ``unreduced`` axes are reported as unsupported.
    """
    tok = _Tokens(str(text))
    if tok.peek() in ("#sdy.sharding", "sdy.sharding"):
        tok.take()
    tok.take("<")
    mesh_name: str | None = None
    mesh: Mesh | None = None
    if tok.peek() == "mesh":
        tok.take()
        mesh = _mesh_body(tok)
    else:
        mesh_name = tok.take(kind="sym")[1:]
    tok.take(",")
    tok.take("[")
    dims: list[DimSpec] = []
    while not tok.accept("]"):
        tok.take("{")
        axes: list[str] = []
        is_open = False
        while not tok.accept("}"):
            if tok.accept("?"):
                is_open = True
            else:
                axes.append(_axis_name(tok))
            if not tok.accept(","):
                tok.take("}")
                break
        prio = None
        nxt = tok.peek()
        if nxt is not None and re.fullmatch(r"p\d+", nxt):
            prio = int(tok.take()[1:])
        dims.append(DimSpec(tuple(axes), is_open, prio))
        if not tok.accept(","):
            tok.take("]")
            break
    replicated: list[str] = []
    while tok.accept(","):
        key = tok.take(kind="word")
        if key != "replicated":
            raise SpecError(
                f"{key}= axes in {text.strip()!r} are not supported: drop the {key}= list"
            )
        tok.take("=")
        tok.take("{")
        while not tok.accept("}"):
            replicated.append(_axis_name(tok))
            tok.accept(",")
    tok.take(">")
    if tok.peek() is not None:
        tok.fail(f"unexpected {tok.peek()!r} after the closing >")
    return SdySharding(mesh_name, mesh, Spec(tuple(dims), tuple(replicated)))


def parse_sdy_mesh(text: str) -> tuple[str | None, Mesh]:
    """Parse ``sdy.mesh @name = <[...]>`` or ``#sdy.mesh<[...]>`` into (name, Mesh)."""
    tok = _Tokens(str(text))
    name = None
    first = tok.peek()
    if first == "sdy.mesh":
        tok.take()
        name = tok.take(kind="sym")[1:]
        tok.take("=")
    elif first == "#sdy.mesh":
        tok.take()
    mesh = _mesh_body(tok)
    if tok.peek() is not None:
        tok.fail(f"unexpected {tok.peek()!r} after the mesh")
    return name, mesh


def readable_spec(text: str) -> Spec | None:
    """The Spec of a sharding written in a program (``#sdy.sharding<@mesh, [{"data"}, {}]>``),
    or None when it is not a single Shardy sharding this module reads (GSPMD text,
    sub-axes, per-value lists)."""
    try:
        return parse_sdy_sharding(text).spec
    except ShardscopeError:
        return None


_AXIS = re.compile(r'"([^"]+)"(?::\((\d+)\)(\d+))?')


def axes_in(text: str) -> tuple[str, ...]:
    """Axis names (``x`` or ``x:(pre)size``) in a Shardy attribute's text, in order."""
    out = []
    for m in _AXIS.finditer(text):
        out.append(f"{m.group(1)}:({m.group(2)}){m.group(3)}" if m.group(2) else m.group(1))
    return tuple(dict.fromkeys(out))
