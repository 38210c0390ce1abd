"""ROS 2 message classes without ROS: one :class:`Message` subclass per ``.msg`` definition.

A message class is declared with the text of its ROS 2 ``.msg`` file::

    class Vector3(Message, type_name="geometry_msgs/msg/Vector3",
                  definition="float64 x\\nfloat64 y\\nfloat64 z"):
        pass

and behaves like the class ``rosidl_generator_py`` makes for rclpy, so node code runs
unchanged on both backends:

* keyword constructor, attributes named as in the ``.msg`` file, ``==`` and ``repr``;
* numeric sequences (``float64[]``, ``uint8[]``) are ``array.array``, fixed-size numeric
  arrays (``float64[9]``) are ``numpy.ndarray``, ``string[]`` and sequences of messages
  (``TransformStamped[]``) are lists (fixed-size arrays of messages are not supported);
  a ``byte`` is a ``bytes`` of length 1, as in rclpy; a ``char`` is a ``uint8`` (rosidl's
  mapping); a bounded ``string<=N`` is a ``str`` of at most N UTF-8 bytes;
* assignments are checked the way rclpy checks them with ``ROS_PYTHON_CHECK_FIELDS=1``:
  a float field takes a ``float`` (not an ``int``), an integer field an ``int`` in
  range, a nested field an instance of its class. rclpy's C conversion reads an ``int``
  in a float field as garbage when checks are off, so refusing it here catches, in CI,
  code that would misbehave on a real ROS 2 install.

Wire format, type hash and DDS type names are derived from the same parsed fields
(:mod:`.cdr`, :mod:`.typehash`, :mod:`.idl`).
"""

from __future__ import annotations

import array
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

# primitive -> (struct format char, size in bytes, array.array typecode or None, numpy dtype,
#               rclpy's name for it in get_fields_and_field_types())
PRIMITIVES: dict[str, tuple[str, int, str | None, str, str]] = {
    "bool": ("?", 1, None, "bool", "boolean"),
    "int8": ("b", 1, "b", "int8", "int8"),
    "uint8": ("B", 1, "B", "uint8", "uint8"),
    "int16": ("h", 2, "h", "int16", "int16"),
    "uint16": ("H", 2, "H", "uint16", "uint16"),
    "int32": ("i", 4, "i", "int32", "int32"),
    "uint32": ("I", 4, "I", "uint32", "uint32"),
    "int64": ("q", 8, "q", "int64", "int64"),
    "uint64": ("Q", 8, "Q", "uint64", "uint64"),
    "float32": ("f", 4, "f", "float32", "float"),
    "float64": ("d", 8, "d", "float64", "double"),
    # ROS ``byte`` (IDL octet): a ``bytes`` of length 1, as in rclpy (scalars only)
    "byte": ("c", 1, None, "uint8", "octet"),
}
_INT_RANGES = {
    "int8": (-(2**7), 2**7), "uint8": (0, 2**8), "int16": (-(2**15), 2**15), "uint16": (0, 2**16),
    "int32": (-(2**31), 2**31), "uint32": (0, 2**32), "int64": (-(2**63), 2**63), "uint64": (0, 2**64),
}
_FLOAT_MAX = {"float32": 3.402823466e38, "float64": 1.7976931348623157e308}

# full name "pkg/msg/Name" -> class; filled as classes are declared
REGISTRY: dict[str, type["Message"]] = {}


@dataclass(frozen=True)
class Field:
    """One member of a message, as parsed from its ``.msg`` line."""

    name: str
    base: str  # a primitive name, "string", or a full message name "pkg/msg/Name"
    kind: str  # "scalar" | "sequence" | "array"
    size: int = 0  # element count of a fixed-size array
    default: Any = None  # the .msg default of a scalar, if any
    string_bound: int = 0  # N of a bounded string ``string<=N``; 0 for an unbounded one

    @property
    def is_message(self) -> bool:
        return "/" in self.base

    @property
    def message_class(self) -> type["Message"]:
        return REGISTRY[self.base]

    def rclpy_type_string(self) -> str:
        """The type as rclpy's ``get_fields_and_field_types()`` spells it."""
        if self.is_message:
            pkg, _, name = self.base.split("/")
            elem = f"{pkg}/{name}"
        elif self.base == "string":
            elem = f"string<{self.string_bound}>" if self.string_bound else "string"
        else:
            elem = PRIMITIVES[self.base][4]
        if self.kind == "sequence":
            return f"sequence<{elem}>"
        if self.kind == "array":
            return f"{elem}[{self.size}]"
        return elem


def parse_definition(package: str, definition: str) -> tuple[Field, ...]:
    """Parse the fields of a ``.msg`` text (comments, blank lines and constants skipped)."""
    fields = []
    for raw in definition.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 2 or "=" in parts[1]:
            raise ValueError(f"{package}: cannot parse message line {raw!r}")
        type_text, name = parts[0], parts[1]
        kind, size = "scalar", 0
        if type_text.endswith("]"):
            type_text, count = type_text[:-1].split("[", 1)
            kind, size = ("sequence", 0) if count == "" else ("array", int(count))
        string_bound = 0
        if type_text.startswith("string<="):
            if kind != "scalar":
                raise ValueError(f"{package}: bounded strings are supported as scalars only: {raw!r}")
            type_text, string_bound = "string", int(type_text[len("string<="):])
        if type_text == "char":
            type_text = "uint8"  # rosidl maps a .msg ``char`` to IDL uint8 (and rclpy to an int)
        if type_text in PRIMITIVES or type_text == "string":
            base = type_text
        elif type_text == "Header":
            base = "std_msgs/msg/Header"
        elif "/" in type_text:
            pkg, msg_name = type_text.split("/")[0], type_text.split("/")[-1]
            base = f"{pkg}/msg/{msg_name}"
        else:
            base = f"{package}/msg/{type_text}"
        default = None
        if len(parts) == 3:
            if kind != "scalar" or base not in PRIMITIVES:
                raise ValueError(f"{package}: defaults are supported on numeric scalars only: {raw!r}")
            default = float(parts[2]) if base.startswith("float") else int(parts[2])
        fields.append(Field(name, base, kind, size, default, string_bound))
    return tuple(fields)


class _MessageMeta(type):
    """Builds a message class from its ``.msg`` text: slots, checked properties, registry."""

    def __new__(mcls, name: str, bases: tuple, ns: dict, *, type_name: str = "", definition: str = ""):
        if not type_name:  # the abstract base
            return super().__new__(mcls, name, bases, ns)
        fields = parse_definition(type_name.split("/")[0], definition)
        for f in fields:
            if f.is_message and f.base not in REGISTRY:
                raise ValueError(f"{type_name}: field {f.name!r} needs {f.base}, declared later")
            if f.is_message and f.kind == "array":
                raise ValueError(f"{type_name}: fixed-size arrays of messages are not supported")
            if f.base == "byte" and f.kind != "scalar":
                raise ValueError(f"{type_name}: byte arrays and sequences are not supported")
        ns["__slots__"] = tuple("_" + f.name for f in fields)
        ns["_type"] = type_name
        ns["_fields"] = fields
        ns["_fields_and_field_types"] = {f.name: f.rclpy_type_string() for f in fields}
        for f in fields:
            ns[f.name] = property(_getter(f), _setter(type_name, f), doc=f"Message field '{f.name}'.")
        cls = super().__new__(mcls, name, bases, ns)
        REGISTRY[type_name] = cls
        return cls


class Message(metaclass=_MessageMeta):
    """Base class of our ROS 2 message classes; see the module docstring."""

    __slots__ = ()
    _type: ClassVar[str]  # "sensor_msgs/msg/Image"
    _fields: ClassVar[tuple[Field, ...]]
    _fields_and_field_types: ClassVar[dict[str, str]]

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(k for k in kwargs if k not in self._fields_and_field_types)
        if unknown:
            raise TypeError(f"Invalid arguments passed to constructor of {self._type}: {', '.join(unknown)}")
        for f in self._fields:
            setattr(self, f.name, kwargs[f.name] if f.name in kwargs else _default(f))

    @classmethod
    def get_fields_and_field_types(cls) -> dict[str, str]:
        return dict(cls._fields_and_field_types)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return False
        for f in self._fields:
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.kind == "array":
                if not np.array_equal(a, b):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]  # mutable, like rclpy's messages

    def __repr__(self) -> str:
        pkg, _, name = self._type.split("/")
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._fields)
        return f"{pkg}.msg.{name}({args})"


def _default(f: Field) -> Any:
    if f.kind == "sequence":
        if f.base == "string" or f.base == "bool" or f.is_message:
            return []
        return array.array(PRIMITIVES[f.base][2])
    if f.kind == "array":
        if f.base == "string":
            return [""] * f.size
        return np.zeros(f.size, dtype=PRIMITIVES[f.base][3])
    if f.is_message:
        return f.message_class()
    if f.base == "string":
        return ""
    if f.base == "byte":
        return bytes([f.default or 0])
    if f.default is not None:
        return f.default
    return {"bool": False, "float32": 0.0, "float64": 0.0}.get(f.base, 0)


def _getter(f: Field):
    slot = "_" + f.name

    def get(self: Message) -> Any:
        return getattr(self, slot)

    return get


def _setter(type_name: str, f: Field):
    """Build the checked setter for field ``f`` (see the module docstring for the rules)."""
    slot = "_" + f.name
    where = f"The '{f.name}' field of {type_name}"

    if f.kind == "scalar":
        if f.is_message:
            nested = f.message_class

            def check(value: Any) -> Any:
                if not isinstance(value, nested):
                    raise TypeError(f"{where} must be a sub message of type '{nested.__name__}'")
                return value
        elif f.base == "string":
            bound = f.string_bound

            def check(value: Any) -> Any:
                if not isinstance(value, str):
                    raise TypeError(f"{where} must be of type 'str'")
                if bound and len(value.encode("utf-8")) > bound:  # the wire bound is in bytes
                    raise ValueError(f"{where} must be a string of at most {bound} bytes")
                return value
        else:
            check = _scalar_check(f.base, where)
    elif f.kind == "sequence":
        check = _sequence_check(f, where)
    else:
        check = _array_check(f, where)

    def set_(self: Message, value: Any) -> None:
        object.__setattr__(self, slot, check(value))

    return set_


def _scalar_check(base: str, where: str):
    if base == "bool":
        def check(value: Any) -> Any:
            if not isinstance(value, bool):
                raise TypeError(f"{where} must be of type 'bool'")
            return value
        return check
    if base == "byte":
        def check(value: Any) -> Any:
            if not isinstance(value, bytes) or len(value) != 1:
                raise TypeError(f"{where} must be of type 'bytes' with length 1")
            return value
        return check
    if base in _FLOAT_MAX:
        bound = _FLOAT_MAX[base]

        def check(value: Any) -> Any:
            if not isinstance(value, float):
                raise TypeError(f"{where} must be of type 'float', not {type(value).__name__}")
            if (value < -bound or value > bound) and not math.isinf(value):
                raise ValueError(f"{where} must be a {base} in [{-bound}, {bound}]")
            return value
        return check
    lo, hi = _INT_RANGES[base]

    def check(value: Any) -> Any:
        if not isinstance(value, int):
            raise TypeError(f"{where} must be of type 'int', not {type(value).__name__}")
        if not lo <= value < hi:
            raise ValueError(f"{where} must be an integer in [{lo}, {hi - 1}]")
        return value
    return check


def _sequence_check(f: Field, where: str):
    if f.base == "string" or f.base == "bool" or f.is_message:
        elem = str if f.base == "string" else bool if f.base == "bool" else f.message_class

        def check(value: Any) -> Any:
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise TypeError(f"{where} must be a sequence of '{elem.__name__}'")
            value = list(value)
            if not all(isinstance(v, elem) for v in value):
                raise TypeError(f"{where} must be a sequence of '{elem.__name__}'")
            return value
        return check

    typecode, dtype = PRIMITIVES[f.base][2], PRIMITIVES[f.base][3]
    elem_check = _scalar_check(f.base, where)

    def check(value: Any) -> Any:
        if isinstance(value, array.array):
            if value.typecode != typecode:
                raise TypeError(f"{where} array.array() must have the type code of '{typecode}'")
            return value
        out = array.array(typecode)
        if isinstance(value, np.ndarray):
            # a fast path: the cast is checked, then the bytes are copied once
            cast = value.astype(dtype, casting="same_kind" if value.dtype.kind == "f" else "unsafe", copy=False)
            if value.dtype.kind in "iub" and dtype != value.dtype and not np.array_equal(cast, value):
                raise ValueError(f"{where} values do not fit in {f.base}")
            out.frombytes(np.ascontiguousarray(cast).tobytes())
            return out
        if isinstance(value, (bytes, bytearray, memoryview)) and typecode == "B":
            out.frombytes(value)
            return out
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            raise TypeError(f"{where} must be a sequence of {f.base}")
        for v in value:
            out.append(elem_check(v))
        return out
    return check


def _array_check(f: Field, where: str):
    if f.base == "string":
        def check(value: Any) -> Any:
            value = list(value)
            if len(value) != f.size or not all(isinstance(v, str) for v in value):
                raise TypeError(f"{where} must be {f.size} strings")
            return value
        return check
    dtype = np.dtype(PRIMITIVES[f.base][3])

    def check(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            if value.dtype != dtype:
                raise TypeError(f"{where} numpy.ndarray() must have the dtype of '{dtype}'")
            if value.size != f.size:
                raise ValueError(f"{where} numpy.ndarray() must have a size of {f.size}")
            return value
        arr = np.array(value, dtype=dtype)
        if arr.shape != (f.size,):
            raise ValueError(f"{where} must have length {f.size}")
        return arr
    return check
