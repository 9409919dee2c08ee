"""torch_xla captures: the graphs a torch_xla script's syncs compiled, as captured functions.

``capture`` runs the script with ``capture_site/_shardscope_torch.py`` watching for its
import of torch_xla (see there). What that leaves in the capture's folder is read here:

- ``torch.json``: each sync (``torch_xla.sync``, ``xm.mark_step``) with its line, its
  graph's device-data inputs in parameter order (named by the script's modules, optimizers
  and variables) and the dumps that appeared while it ran; each ``xs.Mesh`` and each
  ``xs.mark_sharding``;
- ``torch_dump/``: XLA's dump of every compiled graph, ``module_NNNN.SyncTensorsGraph.ID``
  ``.before_optimizations.hlo.pb`` (the graph torch_xla built, with its shardings) and
  ``.cpu_after_optimizations.txt`` (torch_xla's own compiled, partitioned module).

Each graph one of the first syncs compiled becomes a ``CapturedFunction``: its StableHLO
(``hlo_import``, in a worker) with the arguments named as the script names them, the mesh
it was sharded over (the mesh of the last ``mark_sharding`` before its sync) and that
mesh's device order, the sync's line, how many syncs ran it, and torch_xla's compiled
module, whose collectives are the ones the script really runs. torch_xla 2.9 partitions
with GSPMD, so each is marked ``partitioner="gspmd"``.
"""

from __future__ import annotations

import re
from pathlib import Path

from shardscope.backend.errors import ProgramError
from shardscope.backend.hlo.syntax import is_hlo_module
from shardscope.backend.isolation.json_worker import run_json_worker
from shardscope.backend.program.capture_file import (
    FOLDER_FIX,
    Capture,
    CapturedFunction,
    left_json,
    left_text,
)
from shardscope.backend.program.mlir import closing_bracket, count_ops
from shardscope.backend.program.torch_lines import backward_lines

DUMP = "torch_dump"
RECORD = "torch.json"
_IMPORT_WORKER = "shardscope.backend.program.hlo_import"
_PROTO = ".before_optimizations.hlo.pb"
_MAIN = re.compile(r"^\s*func\.func (?:public )?@main\(", re.MULTILINE)
_ARG = re.compile(r"(?:^|, )(%arg\d+): ")


def torch_record(folder: Path) -> dict | None:
    """What the hook recorded in ``folder``, or None where the script never imported
    torch_xla (or the record cannot be read)."""
    data = left_json(folder / RECORD, "the capture's record of torch_xla")
    return data if isinstance(data, dict) else None


def collect_torch(folder: Path, capture: Capture, timeout: float) -> bool:
    """Add the graphs of a torch_xla run recorded in ``folder`` to ``capture``; False
    where the script did not import torch_xla."""
    record = torch_record(folder)
    if record is None:
        return False
    capture.framework = "torch_xla"
    capture.warnings.extend(hook_warnings(record))
    dump = folder / DUMP
    syncs = [s for s in record.get("syncs", []) if isinstance(s, dict)]
    graphs = [(s, name) for s in syncs for name in s.get("dumps", []) if name.endswith(_PROTO)]
    owned = {name for _, name in graphs}
    for path in sorted(dump.glob(f"*{_PROTO}")) if dump.is_dir() else []:
        if path.name not in owned:
            module = _module_name(path.name)
            capture.skipped[module] = capture.skipped.get(module, 0) + 1
    if not graphs:
        return True
    report = run_json_worker(
        _IMPORT_WORKER,
        {"protos": [str(dump / name) for _, name in graphs]},
        what="reading torch_xla's graphs",
        cwd=folder,
        timeout=timeout,
    )
    meshes = _events(record, "meshes")
    marks = _events(record, "marks")
    seen: dict[str, int] = {}
    for (sync, name), converted in zip(graphs, report["modules"], strict=True):
        text = converted.get("text")
        if text is None:
            raise ProgramError(
                f"torch_xla's graph {name} could not be read: {converted.get('error')}; "
                f"capture the script again, or report the graph"
            )
        inputs = [i for i in sync.get("inputs", []) if isinstance(i, dict)]
        names = _argument_names(text, inputs)
        text = name_arguments(without_op_scopes(text), names)
        text = backward_lines(text, record.get("scope_lines"))
        mesh_record = _mesh_before(sync.get("seq", 0), marks, meshes)
        mesh, order = _mesh(mesh_record)
        if order is not None:
            text = as_positions(text, order)
        base = graph_name(sync, syncs)
        seen[base] = seen.get(base, 0) + 1
        capture.functions.append(
            CapturedFunction(
                name=base if seen[base] == 1 else f"{base}.{seen[base]}",
                module=_module_name(name),
                mlir=text,
                ops=count_ops(text),
                mesh=mesh,
                file=sync["file"] if isinstance(sync.get("file"), str) else None,
                line=sync["line"] if type(sync.get("line")) is int else None,
                calls=_calls(sync, syncs),
                device_order=order,
                partitioner="gspmd",
                compiled_hlo=_compiled(dump, name),
                sharded_by=sharded_by(names, inputs),
            )
        )
    return True


_DEVICES = re.compile(r"devices=\[([\d,]+)\](<=\[[\d,]+\](?:T\([\d,]+\))?|[\d,]+)")


def as_positions(text: str, order: list[int]) -> str:
    """``text`` with the devices of every GSPMD sharding written as positions in the
    mesh's device ``order`` instead of device ids.

    torch_xla's graphs name devices by id (its executables' device assignment is 0, 1,
    2...), while a module shardscope reads names them by position in its mesh's order, as
    ``jax.jit`` lowers a module for a mesh over devices in another order; a compile that
    lays the devices out in ``order`` then places every tile where torch_xla did."""
    import numpy as np

    from shardscope.backend.errors import SpecError
    from shardscope.backend.sharding.hlo_text import parse_hlo_sharding

    position = np.empty(len(order), dtype=np.int64)
    position[np.asarray(order)] = np.arange(len(order))

    def rewrite(m: re.Match) -> str:
        try:
            ids = parse_hlo_sharding("{" + m[0] + "}").assignment.reshape(-1)
        except SpecError:
            return m[0]
        if ids.max(initial=0) >= len(order):
            return m[0]
        return f"devices=[{m[1]}]" + ",".join(str(int(p)) for p in position[ids])

    return _DEVICES.sub(rewrite, text)


_SCOPED = re.compile(r'(loc\(|op_name=)"([^"/][^"]*/[^"]*)"(?!:)')
_COUNTER = re.compile(r"\.\d+$")


def without_op_scopes(text: str) -> str:
    """``text`` (StableHLO locations, or HLO ``op_name`` metadata) with each op's scope as
    the script opened it: the counter torch_xla gives each scope
    (``layers/0.2/attn.3/aten__mm``) and the scope it gives some ops of their own
    (``aten__add.14/aten__add``) dropped: ``layers/0/attn/aten__mm``, ``aten__add``."""

    def plain(m: re.Match) -> str:
        *scopes, op = m[2].split("/")
        kept = [_COUNTER.sub("", s) for s in scopes]
        while kept and kept[-1] == op:
            kept.pop()
        return m[1] + '"' + "/".join([*kept, op]) + '"'

    return _SCOPED.sub(plain, text)


def hook_warnings(record: dict) -> list[str]:
    """What the user should know about how the graphs were recorded: a dispatch or
    function mode active at a sync (torch_xla traces differently under one, so the graph
    is the one the script runs with it), and what the hook could not do."""
    out = []
    modes = sorted(
        {m for s in record.get("syncs", []) if isinstance(s, dict) for m in s.get("modes") or []}
    )
    if modes:
        out.append(
            f"a dispatch or function mode was active at a sync ({', '.join(modes)}): "
            f"torch_xla traces views differently under one, so the graphs are the ones the "
            f"script runs with it, not without"
        )
    for error in record.get("errors", []):
        if isinstance(error, str):
            out.append(f"the capture hook could not do everything: {error}")
    return out


_INTERNAL = "_clear_pending"


def graph_name(sync: dict, syncs: list[dict]) -> str:
    """The name the script gave the graph (``torch_xla.compile(name=...)``, else the
    compiled function's name), or ``syncN`` for the script's N-th sync that computed
    something: the syncs a data loader or ``torch_xla.compile`` makes before a graph, with
    nothing to compute, do not count."""
    name = sync.get("graph")
    if isinstance(name, str) and name and not _internal(sync):
        return name
    index = sync.get("index", 0)
    earlier = [s for s in syncs if s.get("index", 0) < index and _computes(s)]
    return f"sync{len(earlier) + 1}"


def _internal(sync: dict) -> bool:
    """Whether ``sync`` is ``torch_xla.compile``'s own, before its graph."""
    name = sync.get("graph")
    return isinstance(name, str) and name.endswith(_INTERNAL)


def _computes(sync: dict) -> bool:
    return not _internal(sync) and bool(sync.get("inputs") or sync.get("dumps"))


def _module_name(dump_name: str) -> str:
    """``SyncTensorsGraph.715`` for ``module_0000.SyncTensorsGraph.715.before_...``."""
    stem = dump_name.split(".before_optimizations")[0]
    return stem.split(".", 1)[1] if stem.startswith("module_") and "." in stem else stem


def _compiled(dump: Path, proto_name: str) -> str | None:
    """torch_xla's compiled module of the graph dumped as ``proto_name``, or None."""
    stem = proto_name[: -len(_PROTO)]
    for path in sorted(dump.glob(f"{stem}.*after_optimizations.txt")):
        text = left_text(path, "torch_xla's compiled module")
        if text is not None and not is_hlo_module(text):
            raise ProgramError(
                f"torch_xla's compiled module {path.name} is not XLA's HLO text (it does not "
                f"start with HloModule); {FOLDER_FIX}"
            )
        return None if text is None else without_op_scopes(text)
    return None


def _events(record: dict, key: str) -> list[dict]:
    return [e for e in record.get(key, []) if isinstance(e, dict)]


def _mesh_before(seq: int, marks: list[dict], meshes: list[dict]) -> dict | None:
    """The mesh of the last ``mark_sharding`` before the sync, else the last mesh made
    before it, else the first mesh made at all."""
    for mark in reversed(marks):
        if mark.get("seq", 0) < seq and isinstance(mark.get("mesh"), dict):
            return mark["mesh"]
    earlier = [m for m in meshes if m.get("seq", 0) < seq]
    if earlier:
        return earlier[-1]
    return meshes[0] if meshes else None


def _mesh(entry: dict | None) -> tuple[dict[str, int] | None, list[int] | None]:
    """The mesh (axis names with sizes) and its device order (None where it is 0, 1, 2...)
    of a recorded ``xs.Mesh``; an axis without a name is named by its position."""
    if not entry:
        return None, None
    shape = [int(n) for n in entry.get("shape") or []]
    names = entry.get("axis_names") or [f"axis{i}" for i in range(len(shape))]
    mesh = {str(n): size for n, size in zip(names, shape, strict=False)}
    order = [int(d) for d in entry.get("device_ids") or []]
    return mesh or None, (order if order and order != list(range(len(order))) else None)


def _calls(sync: dict, syncs: list[dict]) -> int:
    """How many syncs ran the graph ``sync`` compiled: it, and each later one that
    compiled nothing and read the same inputs, where ``sync`` is the latest graph compiled
    before it on those inputs (a first step's graph and the next steps' graph read the
    same inputs; each later step ran the second)."""
    key = _inputs_key(sync)
    count = 1
    owner = None
    for s in sorted(syncs, key=lambda s: s.get("index", 0)):
        if _inputs_key(s) != key:
            continue
        if s.get("dumps"):
            owner = s
        elif owner is sync:
            count += 1
    return count


def _inputs_key(sync: dict) -> tuple:
    return tuple((i.get("name"), tuple(i.get("shape") or ())) for i in sync.get("inputs", []))


def _main_signature(text: str) -> tuple[int, int] | None:
    """Where ``@main``'s argument list starts and ends (its parentheses) in ``text``."""
    match = _MAIN.search(text)
    if match is None:
        return None
    start = match.end()
    end = closing_bracket(text, start - 1)
    return (start, end) if end is not None else None


def _argument_names(text: str, inputs: list[dict]) -> list[str]:
    """A name per ``@main`` argument: the script's (``model.up.weight``) where the hook
    named the input at that position and the shapes agree, else ``argN``; a name the
    script gives two inputs is numbered on its second."""
    span = _main_signature(text)
    count = len(_ARG.findall(text[span[0] : span[1]])) if span else 0
    shapes = _argument_shapes(text, span) if span else []
    names: list[str] = []
    taken: set[str] = set()
    for i in range(count):
        entry = inputs[i] if len(inputs) == count else None
        name = entry.get("name") if entry else None
        if name is None and entry and isinstance(entry.get("value"), (int, float)):
            name = f"const {entry['value']:.7g}"
        if not isinstance(name, str) or not name or list(entry.get("shape") or []) != shapes[i]:
            name = f"arg{i}"
        unique, n = name, 2
        while unique in taken:
            unique, n = f"{name}#{n}", n + 1
        taken.add(unique)
        names.append(unique)
    return names


def sharded_by(names: list[str], inputs: list[dict]) -> dict[str, str] | None:
    """How the script sharded each argument it sharded, by argument name: the API the
    hook saw it go through and the script's line (``FSDPv2 (its parameters) at
    train.py:78``); None where it saw none."""
    out: dict[str, str] = {}
    if len(inputs) != len(names):
        return None
    for name, entry in zip(names, inputs, strict=True):
        origin = entry.get("sharded_by")
        if not isinstance(origin, dict) or not isinstance(origin.get("via"), str):
            continue
        where = ""
        if isinstance(origin.get("file"), str) and isinstance(origin.get("line"), int):
            where = f" at {Path(origin['file']).name}:{origin['line']}"
        out[name] = origin["via"] + where
    return out or None


_TENSOR = re.compile(r"%arg\d+: tensor<((?:\d+x)*)[a-z]")


def _argument_shapes(text: str, span: tuple[int, int]) -> list[list[int]]:
    return [
        [int(d) for d in dims.split("x") if d] for dims in _TENSOR.findall(text[span[0] : span[1]])
    ]


def name_arguments(text: str, names: list[str]) -> str:
    """``text`` with ``@main``'s ``i``-th argument located at ``loc("names[i]")``, as JAX
    locates an argument by its name."""
    span = _main_signature(text)
    if span is None or not names:
        return text
    start, end = span
    signature = text[start:end]
    starts = [m.start(1) for m in _ARG.finditer(signature)]
    pieces = []
    for k, at in enumerate(starts):
        piece = signature[at : starts[k + 1] if k + 1 < len(starts) else len(signature)]
        if k < len(names):
            piece = _relocated(piece, names[k])
        pieces.append(piece)
    joined = ""
    for k, piece in enumerate(pieces):
        tail = piece.rstrip(", ") if k + 1 < len(pieces) else piece
        joined += tail + (", " if k + 1 < len(pieces) else "")
    return text[:start] + signature[: starts[0] if starts else 0] + joined + text[end:]


def _relocated(piece: str, name: str) -> str:
    """One argument's text with its ``loc(...)`` replaced by ``loc("name")``."""
    at = piece.rfind(" loc(")
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    if at < 0:
        return piece.rstrip(", ") + f' loc("{quoted}")'
    close = closing_bracket(piece, at + len(" loc"))
    if close is None:
        return piece
    return piece[:at] + f' loc("{quoted}")' + piece[close + 1 :]
