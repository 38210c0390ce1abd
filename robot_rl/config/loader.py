"""A strict YAML → dataclass loader.

Configs are plain dataclasses. :func:`build` walks a parsed YAML mapping into one,
checking every key and value on the way, so that a typo in a config file is an error
that names the file and the dotted key instead of a silently ignored setting. Ranges
and choices live next to the field they constrain, through :func:`param`.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from pathlib import Path
from typing import Any, Literal, Mapping, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

from robot_rl.errors import ConfigError

T = TypeVar("T")

_MISSING = dataclasses.MISSING


def param(default: Any = _MISSING, *, min: float | None = None, max: float | None = None,
          default_factory: Any = _MISSING, doc: str = "") -> Any:
    """A dataclass field with an optional inclusive numeric range, checked on load.

    For sequences the range applies to every element.
    """
    meta = {"min": min, "max": max, "doc": doc}
    if default_factory is not _MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; a missing or malformed file is a one-line ConfigError."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{line} is not valid YAML ({getattr(err, 'problem', err)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values")
    return data


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str = "--set") -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides (value parsed as YAML) to a raw config mapping."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"{source}: override {item!r} must look like key.sub=value")
        key, raw = item.split("=", 1)
        value = yaml.safe_load(raw) if raw.strip() else ""
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            nxt = node.get(part)
            if nxt is None:
                nxt = node[part] = {}
            if not isinstance(nxt, dict):
                raise ConfigError(f"{source}: {'.'.join(parts[:-1])} is not a mapping, cannot set {key}")
            node = nxt
        node[parts[-1]] = value
    return data


def build(cls: type[T], data: Any, *, file: str, where: str = "") -> T:
    """Build dataclass ``cls`` from ``data``; every problem names ``file`` and the key."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{file}: {repr(where) if where else 'the top level'} must be a mapping, got {_kind(data)}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            hint = difflib.get_close_matches(str(key), list(fields), n=1)
            suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise ConfigError(f"{file}: unknown key '{_join(where, key)}'{suggestion}")
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        key = _join(where, name)
        if name in data:
            value = _convert(hints[name], data[name], file=file, where=key)
            _check_range(f, value, file=file, where=key)
            kwargs[name] = value
        elif f.default is _MISSING and f.default_factory is _MISSING:
            raise ConfigError(f"{file}: missing required key '{key}'")
    try:
        obj = cls(**kwargs)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{file}: {where or 'config'}: {err}") from None
    return obj


def to_dict(obj: Any) -> Any:
    """A dataclass config back to plain YAML-able data (tuples become lists)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "nothing"}.get(type(value), type(value).__name__)


def _convert(tp: Any, value: Any, *, file: str, where: str) -> Any:
    origin = get_origin(tp)
    args = get_args(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, file=file, where=where)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[0] if len(errors) == 1 else
                          f"{file}: '{where}' has the wrong type ({_kind(value)})")
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ConfigError(f"{file}: '{where}' must be one of {choices}, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, file=file, where=where)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{file}: '{where}' must be a list, got {_kind(value)}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                raise ConfigError(f"{file}: '{where}' must have {len(args)} items, got {len(value)}")
            return tuple(_convert(a, v, file=file, where=f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
        item_t = args[0] if args else Any
        items = [_convert(item_t, v, file=file, where=f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{file}: '{where}' must be a mapping, got {_kind(value)}")
        key_t, val_t = args if args else (Any, Any)
        return {str(k): _convert(val_t, v, file=file, where=_join(where, k)) for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{file}: '{where}' must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{file}: '{where}' must be an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{file}: '{where}' must be a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{file}: '{where}' must be a string, got {value!r}")
        return value
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    raise ConfigError(f"{file}: '{where}' has an unsupported type {tp!r}")


def _check_range(f: dataclasses.Field, value: Any, *, file: str, where: str) -> None:
    lo, hi = f.metadata.get("min"), f.metadata.get("max")
    if lo is None and hi is None or value is None:
        return
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if not isinstance(v, (int, float)):
            continue
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            raise ConfigError(f"{file}: '{where}' = {v!r} is out of range {rng}")
