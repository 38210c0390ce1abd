"""REP-2011 type hashes (``RIHS01_<sha256>``) computed from our message definitions.

rmw_cyclonedds_cpp puts ``typehash=RIHS01_<hex>;`` in every reader's and writer's
USER_DATA, and a ROS 2 peer warns when a matched endpoint lacks it. The hash is the
SHA-256 of a canonical JSON description of the type and of every type it references
(sorted by name), with field types given as ``type_description_interfaces/FieldType``
ids; default values do not take part.
"""

from __future__ import annotations

import functools
import hashlib
import json

from robot_rl.ros.messages.base import Field, Message

# type_description_interfaces/msg/FieldType ids of the scalar types
_FIELD_TYPE_IDS = {
    "int8": 2, "uint8": 3, "int16": 4, "uint16": 5, "int32": 6, "uint32": 7, "int64": 8, "uint64": 9,
    "float32": 10, "float64": 11, "bool": 15, "byte": 16, "string": 17,
}
_NESTED_TYPE = 1
_BOUNDED_STRING = 21  # string<=N, with N as string_capacity
_ARRAY_OFFSET, _BOUNDED_SEQUENCE_OFFSET, _UNBOUNDED_SEQUENCE_OFFSET = 48, 96, 144


def _field_description(f: Field) -> dict:
    type_id = _NESTED_TYPE if f.is_message else _FIELD_TYPE_IDS[f.base]
    if f.string_bound:
        type_id = _BOUNDED_STRING
    if f.kind == "array":
        type_id += _ARRAY_OFFSET
    elif f.kind == "sequence":
        type_id += _UNBOUNDED_SEQUENCE_OFFSET
    return {
        "name": f.name,
        "type": {
            "type_id": type_id,
            "capacity": f.size if f.kind == "array" else 0,
            "string_capacity": f.string_bound,
            "nested_type_name": f.base if f.is_message else "",
        },
    }


def _collect(cls: type[Message], out: dict[str, dict]) -> dict:
    description = {"type_name": cls._type, "fields": [_field_description(f) for f in cls._fields]}
    for f in cls._fields:
        if f.is_message and f.base not in out:
            out[f.base] = _collect(f.message_class, out)
    return description


@functools.lru_cache(maxsize=None)
def type_hash(cls: type[Message]) -> str:
    """``RIHS01_<64 hex>`` of ``cls``, as rosidl computes it at build time."""
    referenced: dict[str, dict] = {}
    main = _collect(cls, referenced)
    document = {
        "type_description": main,
        "referenced_type_descriptions": [referenced[name] for name in sorted(referenced)],
    }
    return "RIHS01_" + hashlib.sha256(json.dumps(document).encode()).hexdigest()
