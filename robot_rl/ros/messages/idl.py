"""cyclonedds-python IDL types for our messages, used only to create DDS topics.

rmw_cyclonedds_cpp names the DDS type of ``sensor_msgs/msg/Image``
``sensor_msgs::msg::dds_::Image_``: a keyless, final struct. Creating a topic needs such
a type object (its name, key flags and XTypes type information go into discovery),
but samples never pass through cyclonedds-python's own serializer: the DDS backend
hands CDR bytes from :mod:`robot_rl.ros.messages.cdr` straight to the writer and
decodes taken bytes itself. This module imports ``cyclonedds`` and is loaded only when
a DDS node is created.
"""

from __future__ import annotations

from typing import Any

from cyclonedds.idl import IdlStruct, make_idl_struct
from cyclonedds.idl import types as t

from robot_rl.ros.messages.base import Field, Message

_PRIMITIVES: dict[str, Any] = {
    "bool": bool, "int8": t.int8, "uint8": t.uint8, "int16": t.int16, "uint16": t.uint16,
    "int32": t.int32, "uint32": t.uint32, "int64": t.int64, "uint64": t.uint64,
    "float32": t.float32, "float64": t.float64, "byte": t.byte, "string": str,
}
_CACHE: dict[type[Message], type[IdlStruct]] = {}


def dds_type_name(type_name: str) -> str:
    """``pkg/msg/Name`` -> ``pkg::msg::dds_::Name_`` (rmw_cyclonedds_cpp's DDS type name)."""
    pkg, sub, name = type_name.split("/")
    return f"{pkg}::{sub}::dds_::{name}_"


def idl_type(cls: type[Message]) -> type[IdlStruct]:
    """The cyclonedds-python struct type that stands for ``cls`` in DDS discovery."""
    found = _CACHE.get(cls)
    if found is None:
        members = {f.name: _member_type(f) for f in cls._fields}
        found = make_idl_struct(cls.__name__ + "_", dds_type_name(cls._type), members)
        _CACHE[cls] = found
    return found


def _member_type(f: Field) -> Any:
    elem = idl_type(f.message_class) if f.is_message else _PRIMITIVES[f.base]
    if f.string_bound:
        elem = t.bounded_str[f.string_bound]
    if f.kind == "sequence":
        return t.sequence[elem]
    if f.kind == "array":
        return t.array[elem, f.size]
    return elem
