"""A strict YAML → dataclass loader.

Configs are plain dataclasses. :func:`build` walks a parsed YAML mapping into one,
checking every key and value on the way, so that a typo in a config file is an error
that names the file and the dotted key instead of a silently ignored setting. Ranges
and choices live next to the field they constrain, through :func:`param`.

Every number must be finite (NaN would pass any ``<``/``>`` range check and reach the
physics), and a number whose field sets no range must stay within
±:data:`UNBOUNDED_MAGNITUDE`. YAML text (a file, or a ``--set`` value) is read through
:mod:`robot_rl.config.yaml_text`, which refuses what could crash or hang the loader
before anything is built.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
from typing import Any, Literal, Mapping, TypeVar, Union, get_args, get_origin, get_type_hints

from robot_rl.config.yaml_text import (  # noqa: F401 - read_yaml, parse_yaml, apply_overrides, to_dict: the loader's API
    MAX_CONFIG_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    apply_overrides,
    join_key,
    parse_yaml,
    read_yaml,
    show,
    to_dict,
)
from robot_rl.errors import ConfigError

T = TypeVar("T")

_MISSING = dataclasses.MISSING

#: The magnitude a number may have when its field sets no ``min``/``max`` of its own.
UNBOUNDED_MAGNITUDE = 1e9


class UnknownKeyError(ConfigError):
    """A key its dataclass does not have. ``key`` is its full dotted name and ``hinted``
    whether the message already suggests a close name, so that the whole config's builder
    (which knows every section) can add one from another section."""

    def __init__(self, message: str, key: str, hinted: bool) -> None:
        super().__init__(message)
        self.key = key
        self.hinted = hinted


class ConfigSource(str):
    """A config file's name that also knows the ``--set`` items applied over the file.

    An error about a key then names what gave the key its value: ``--set
    train.batch_size=-3: 'train.batch_size' = -3 is out of range [1, 65536]``, not the
    file, which holds no -3. It is the file's name as a ``str``, so every message that
    takes a file takes it unchanged.
    """

    overrides: tuple[tuple[str, str], ...]  # (dotted key, the whole item), in the order applied
    flag: str

    def __new__(cls, file: str, overrides: Any = (), flag: str = "--set") -> "ConfigSource":
        obj = super().__new__(cls, file)
        obj.overrides = tuple((".".join(item.split("=", 1)[0].strip().split(".")), item)
                              for item in overrides if isinstance(item, str) and "=" in item)
        obj.flag = flag
        return obj

    def of(self, where: str) -> str:
        """Where the value at dotted key ``where`` came from: the last item that set it (or a
        mapping or list holding it), else the file."""
        for key, item in reversed(self.overrides):
            if where == key or where.startswith((key + ".", key + "[")):
                return f"{self.flag} {shown_item(item)}"
        return str(self)

    def around(self, where: str) -> str:
        """For a check across the keys under ``where`` (all keys when empty): the file, and the
        items that set any of them."""
        items = [item for key, item in self.overrides
                 if not where or key == where or key.startswith(where + ".") or where.startswith(key + ".")]
        if not items:
            return str(self)
        return f"{self} with " + " ".join(f"{self.flag} {shown_item(i)}" for i in items)


def shown_item(item: str) -> str:
    """An override as typed, or cut short and quoted when it would not fit one readable line."""
    return item if item.isprintable() and len(item) <= 80 else show(item)


def source_of(file: str, where: str) -> str:
    """What an error about the value at ``where`` names: its ``--set`` item, or the file."""
    return file.of(where) if isinstance(file, ConfigSource) else file


def source_around(file: str, where: str) -> str:
    """What an error about several keys under ``where`` names: the file, with the items that set them."""
    return file.around(where) if isinstance(file, ConfigSource) else file



def param(default: Any = _MISSING, *, min: Any = None, max: Any = None, finite: bool = True,
          default_factory: Any = _MISSING, doc: str = "") -> Any:
    """A dataclass field with an optional inclusive numeric range, checked on load.

    The range applies to every number in the value (each element of a sequence, each
    value of a mapping). For a fixed-length tuple, ``min``/``max`` may also be a tuple
    of per-element bounds, e.g. ``max=(5000, 5000, 5000, 500, 500, 500)``. Numbers must
    be finite unless ``finite=False``; without a ``min`` or ``max`` a finite number is
    still held within ±:data:`UNBOUNDED_MAGNITUDE`.
    """
    meta = {"min": min, "max": max, "finite": finite, "doc": doc}
    if default_factory is not _MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def build(cls: type[T], data: Any, *, file: str, where: str = "") -> T:
    """Build dataclass ``cls`` from ``data``; every problem names ``file`` and the key."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source_of(file, where)}: {repr(where) if where else 'the top level'} must be a mapping, "
                          f"got {_kind(data)}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            hint = difflib.get_close_matches(str(key), list(fields), n=1)
            suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
            full = join_key(where, key)
            raise UnknownKeyError(f"{source_of(file, full)}: unknown key '{full}'{suggestion}", full, bool(hint))
    kwargs: dict[str, Any] = {}
    for name, f in fields.items():
        key = join_key(where, name)
        if name in data:
            kwargs[name] = _convert(hints[name], data[name], file=file, where=key, limits=_Limits.of(f))
        elif f.default is _MISSING and f.default_factory is _MISSING:
            raise ConfigError(f"{source_of(file, key)}: missing required key '{key}'")
    try:
        obj = cls(**kwargs)
    except (ValueError, TypeError, ArithmeticError) as err:
        raise ConfigError(f"{source_around(file, where)}: {where or 'config'}: {err}") from None
    return obj


class _BadNumber(ConfigError):
    """A number of the right type but a wrong value: a Union reports it instead of trying
    its other types (``serial: 1e300`` is out of range, not 'the wrong type')."""


@dataclasses.dataclass(frozen=True)
class _Limits:
    """The numeric constraints of one field (see :func:`param`)."""

    lo: Any = None
    hi: Any = None
    finite: bool = True

    @staticmethod
    def of(f: dataclasses.Field) -> "_Limits":
        return _Limits(f.metadata.get("min"), f.metadata.get("max"), f.metadata.get("finite", True))

    def item(self, index: int) -> "_Limits":
        """The limits of element ``index`` of a fixed-length tuple (per-element bounds pick theirs)."""
        def pick(bound: Any) -> Any:
            return bound[index] if isinstance(bound, (list, tuple)) else bound
        return _Limits(pick(self.lo), pick(self.hi), self.finite)

    def check(self, value: int | float, *, file: str, where: str) -> None:
        """Raise unless ``value`` is finite (when required) and inside the range.

        NaN is caught first: every comparison with it is False, so no range holds it back.
        """
        if self.finite and isinstance(value, float) and not math.isfinite(value):
            raise _BadNumber(f"{source_of(file, where)}: '{where}' must be a finite number, got {value!r}")
        lo, hi = self.lo, self.hi
        if self.finite:
            lo = -UNBOUNDED_MAGNITUDE if lo is None else lo
            hi = UNBOUNDED_MAGNITUDE if hi is None else hi
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise _BadNumber(f"{source_of(file, where)}: '{where}' = {show(value)} is out of range "
                             f"[{_bound(lo, '-inf')}, {_bound(hi, 'inf')}]")


_NO_LIMITS = _Limits()


def _bound(bound: Any, unbounded: str) -> str:
    if bound is None:
        return unbounded
    return repr(bound) if isinstance(bound, int) or abs(bound) < 1e6 else f"{bound:g}"


def _kind(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "nothing"}.get(type(value), type(value).__name__)


def _convert(tp: Any, value: Any, *, file: str, where: str, limits: _Limits = _NO_LIMITS) -> Any:
    """``value`` checked against type ``tp`` (and, for every number in it, ``limits``)."""
    origin = get_origin(tp)
    args = get_args(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        return _convert_union(args, value, file=file, where=where, limits=limits)
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ConfigError(f"{source_of(file, where)}: '{where}' must be one of {choices}, got {show(value)}")
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, file=file, where=where)
    if origin in (list, tuple):
        return _convert_sequence(origin, args, value, file=file, where=where, limits=limits)
    if origin is dict:
        return _convert_mapping(args, value, file=file, where=where, limits=limits)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source_of(file, where)}: '{where}' must be true or false, got {show(value)}")
        return value
    if tp in (int, float):
        return _convert_number(tp, value, file=file, where=where, limits=limits)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source_of(file, where)}: '{where}' must be a string, got {show(value)}")
        return value
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    raise ConfigError(f"{source_of(file, where)}: '{where}' has an unsupported type {tp!r}")


def _convert_union(args: tuple, value: Any, *, file: str, where: str, limits: _Limits) -> Any:
    if value is None and type(None) in args:
        return None
    errors: list[ConfigError] = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _convert(arg, value, file=file, where=where, limits=limits)
        except _BadNumber:
            raise
        except ConfigError as err:
            errors.append(err)
    if len(errors) == 1:
        raise errors[0]  # as it is: an UnknownKeyError stays one
    raise ConfigError(f"{source_of(file, where)}: '{where}' has the wrong type ({_kind(value)})")


def _convert_sequence(origin: Any, args: tuple, value: Any, *, file: str, where: str, limits: _Limits) -> Any:
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{source_of(file, where)}: '{where}' must be a list, got {_kind(value)}")
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(value) != len(args):
            raise ConfigError(f"{source_of(file, where)}: '{where}' must have {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v, file=file, where=f"{where}[{i}]", limits=limits.item(i))
                     for i, (a, v) in enumerate(zip(args, value)))
    item_t = args[0] if args else Any
    items = [_convert(item_t, v, file=file, where=f"{where}[{i}]", limits=limits) for i, v in enumerate(value)]
    return tuple(items) if origin is tuple else items


def _convert_mapping(args: tuple, value: Any, *, file: str, where: str, limits: _Limits) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source_of(file, where)}: '{where}' must be a mapping, got {_kind(value)}")
    _, val_t = args if args else (Any, Any)
    out: dict[str, Any] = {}
    for k, v in value.items():
        key = join_key(where, k)
        if str(k) in out:
            raise ConfigError(f"{source_of(file, key)}: duplicate key '{key}' (two keys that read the same as text)")
        out[str(k)] = _convert(val_t, v, file=file, where=key, limits=limits)
    return out


def _convert_number(tp: type, value: Any, *, file: str, where: str, limits: _Limits) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (tp is int and isinstance(value, float)):
        what = "an integer" if tp is int else "a number"
        raise ConfigError(f"{source_of(file, where)}: '{where}' must be {what}, got {show(value)}")
    if tp is float:
        try:
            value = float(value)
        except OverflowError:  # an integer beyond any float
            raise _BadNumber(f"{source_of(file, where)}: '{where}' = {show(value)} is out of range") from None
    limits.check(value, file=file, where=where)
    return value
