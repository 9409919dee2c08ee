"""JSON forms of dataclasses, read off their fields.

A dataclass that also inherits ``JsonForm`` gets ``to_json()``: one entry per field, in
the order the fields are declared, each value in plain JSON form. A field declared with
``json_field`` changes its entry:

- ``json_field(key="from")``: the entry is named ``"from"`` instead of the field's name;
- ``json_field(omit=True)``: the field has no entry;
- ``json_field(convert=fn)``: the entry is ``fn(value)``, taken as it is.

``json_field`` also takes ``default`` or ``default_factory``, as ``dataclasses.field``
does. Without ``convert`` a value becomes plain JSON by ``plain``: tuples and lists
become lists, dicts keep their keys, an object with its own ``to_json()`` gives that, any
other dataclass its ``json_form``, and everything else (str, int, float, bool, None)
stays. For example::

    @dataclass(frozen=True)
    class Reshard(JsonForm):
        tensor: str
        from_axes: tuple[str, ...] = json_field(key="from")
        closed: bool = json_field(omit=True, default=False)

    Reshard("x", ("a",)).to_json() == {"tensor": "x", "from": ["a"]}

``json_form(obj)`` is the same function for a dataclass that does not inherit the mixin;
``from_json_form(cls, data)`` reads such an object back into a ``cls``, by the type
annotations of its fields (a field without an entry keeps its default).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

_META = "shardscope.json"
_PLAIN = (str, int, float, bool, type(None))


@dataclasses.dataclass(frozen=True)
class _Entry:
    key: str | None
    omit: bool
    convert: Callable[[Any], Any] | None


def json_field(
    *,
    key: str | None = None,
    omit: bool = False,
    convert: Callable[[Any], Any] | None = None,
    **field_options: Any,
) -> Any:
    """A ``dataclasses.field`` whose JSON entry is renamed, omitted or converted.

    ``field_options`` (``default``, ``default_factory``, ``repr``, ...) go to
    ``dataclasses.field``.
    """
    return dataclasses.field(metadata={_META: _Entry(key, omit, convert)}, **field_options)


_Plan = tuple[tuple[str, str, Callable[[Any], Any] | None], ...]
_PLANS: dict[type, _Plan] = {}
_SCALARS = frozenset(_PLAIN)


def _plan(cls: type) -> _Plan:
    """``(attribute, key, convert)`` per JSON entry of ``cls``, worked out once per class."""
    plan = _PLANS.get(cls)
    if plan is None:
        out = []
        for f in dataclasses.fields(cls):
            entry = f.metadata.get(_META)
            if entry is None:
                out.append((f.name, f.name, None))
            elif not entry.omit:
                out.append((f.name, entry.key or f.name, entry.convert))
        plan = _PLANS[cls] = tuple(out)
    return plan


def json_form(obj: Any) -> dict[str, Any]:
    """The JSON object of dataclass instance ``obj`` (rules in the module docstring)."""
    out: dict[str, Any] = {}
    for attr, key, convert in _plan(type(obj)):
        value = getattr(obj, attr)
        if convert is not None:
            out[key] = convert(value)
        elif type(value) in _SCALARS:
            # Results hold thousands of these objects: scalars, the common case, skip ``plain``.
            out[key] = value
        else:
            out[key] = plain(value)
    return out


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (rules in the module docstring)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_form(value)
    return value


class JsonForm:
    """Mixin for a dataclass: ``to_json()`` is its ``json_form``."""

    def to_json(self) -> dict[str, Any]:
        """One entry per field, renamed, omitted or converted as its ``json_field`` says."""
        return json_form(self)


def from_json_form(cls: type, data: dict[str, Any]) -> Any:
    """The ``cls`` whose ``json_form`` is ``data`` (lists become the tuples, and objects
    the dataclasses, that the fields' annotations name); a field with no entry (omitted,
    or ``convert``-ed, which has no way back) keeps its default."""
    hints = typing.get_type_hints(cls)
    values = {
        attr: _from_plain(hints[attr], data[key])
        for attr, key, convert in _plan(cls)
        if convert is None and key in data
    }
    return cls(**values)


def _from_plain(hint: Any, value: Any) -> Any:
    """``value`` (plain JSON data) as annotation ``hint`` names it."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _from_plain(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_plain(args[0], v) for v in value)
        return tuple(_from_plain(a, v) for a, v in zip(args, value, strict=True))
    if origin is list:
        (arg,) = typing.get_args(hint)
        return [_from_plain(arg, v) for v in value]
    if origin is dict:
        _, arg = typing.get_args(hint)
        return {k: _from_plain(arg, v) for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_json_form(hint, value)
    return value
