"""Our message classes against rosbags' ROS 2 (Jazzy) typesystem: bytes, hashes, decoding.

rosbags is an independent implementation of ROS 2's CDR and of REP-2011, so equal bytes
and equal hashes mean a ROS 2 peer reads what we write and matches our endpoints.
"""

from __future__ import annotations

import array
import random
import struct

import numpy as np
import pytest

from robot_rl.ros import messages as m
from robot_rl.ros.errors import MessageError
from robot_rl.ros.messages.base import PRIMITIVES

rosbags_typesys = pytest.importorskip("rosbags.typesys")
STORE = rosbags_typesys.get_typestore(rosbags_typesys.Stores.ROS2_JAZZY)

ALL_TYPES = list(m.ALL)


def populated(cls, rng: random.Random):
    """An instance of ``cls`` with non-default values everywhere (odd string and sequence sizes)."""
    kwargs = {}
    for f in cls._fields:
        kwargs[f.name] = _value(f, rng)
    return cls(**kwargs)


def _scalar(base: str, rng: random.Random):
    if base == "bool":
        return rng.random() < 0.5
    if base == "byte":
        return bytes([rng.randint(0, 255)])
    if base == "string":
        return "".join(rng.choice("abcxyz_/é") for _ in range(rng.randint(0, 7)))
    if base.startswith("float"):
        return float(np.float32(rng.uniform(-1e3, 1e3))) if base == "float32" else rng.uniform(-1e6, 1e6)
    lo, hi = {"uint8": (0, 255), "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1)}.get(base, (0, 100))
    return rng.randint(lo, hi)


def _value(f, rng: random.Random):
    if f.is_message and f.kind == "sequence":
        return [populated(f.message_class, rng) for _ in range(rng.choice([0, 1, 3]))]
    if f.is_message:
        return populated(f.message_class, rng)
    if f.kind == "scalar":
        return _scalar(f.base, rng)
    n = f.size if f.kind == "array" else rng.choice([0, 1, 3, 5])
    values = [_scalar(f.base, rng) for _ in range(n)]
    if f.base in ("string", "bool"):
        return values
    if f.kind == "array":
        return np.array(values, dtype=PRIMITIVES[f.base][3])
    return array.array(PRIMITIVES[f.base][2], values)


def to_rosbags(msg):
    """The same message as a rosbags dataclass instance."""
    cls = STORE.types[msg._type]
    kwargs = {}
    for f in msg._fields:
        v = getattr(msg, f.name)
        if f.is_message and f.kind == "sequence":
            v = [to_rosbags(item) for item in v]
        elif f.is_message:
            v = to_rosbags(v)
        elif f.kind != "scalar" and f.base not in ("string",):
            v = np.asarray(v, dtype=PRIMITIVES[f.base][3])
        elif f.base == "byte":
            v = int.from_bytes(v, "little", signed=True)  # rosbags holds a byte as a signed int
        kwargs[f.name] = v
    return cls(**kwargs)


@pytest.mark.parametrize("cls", ALL_TYPES, ids=lambda c: c._type)
def test_type_hash_equals_rosbags(cls):
    assert m.type_hash(cls) == STORE.hash_rihs01(cls._type)


def test_string_hash_is_the_published_jazzy_value():
    # as printed by `ros2 topic info -v` for std_msgs/msg/String on Jazzy
    assert m.type_hash(m.String) == "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"


@pytest.mark.parametrize("cls", ALL_TYPES, ids=lambda c: c._type)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cdr_bytes_equal_rosbags_and_decode_both_ways(cls, seed):
    msg = populated(cls, random.Random(f"{cls._type}{seed}"))
    ours = bytes(m.serialize(msg))
    theirs = bytes(STORE.serialize_cdr(to_rosbags(msg), cls._type, little_endian=True))
    assert ours == theirs
    assert m.deserialize(theirs, cls) == msg
    # and big-endian CDR from another machine decodes to the same message
    theirs_be = bytes(STORE.serialize_cdr(to_rosbags(msg), cls._type, little_endian=False))
    assert m.deserialize(theirs_be, cls) == msg


def test_default_messages_serialize_like_rosbags():
    for cls in ALL_TYPES:
        msg = cls()
        assert bytes(m.serialize(msg)) == bytes(STORE.serialize_cdr(to_rosbags(msg), cls._type))


def test_image_layout_alignment_after_odd_frame_id():
    # header.frame_id of 3 chars puts height at an unaligned offset unless padded: check by hand
    img = m.Image(header=m.Header(stamp=m.Time(sec=1, nanosec=2), frame_id="cam"), height=1, width=2,
                  encoding="rgb8", step=6, data=bytes(range(6)))
    raw = bytes(m.serialize(img))
    assert raw[:4] == b"\x00\x01\x00\x00"
    sec, nanosec, n = struct.unpack_from("<iII", raw, 4)
    assert (sec, nanosec, n) == (1, 2, 4) and raw[16:20] == b"cam\x00"
    assert struct.unpack_from("<II", raw, 20) == (1, 2)  # height, width right after, 4-aligned
    assert raw.endswith(bytes(range(6)))


def test_quaternion_defaults_to_identity_like_rclpy():
    q = m.Quaternion()
    assert (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 1.0)
    assert m.Pose().orientation.w == 1.0


def test_fields_and_types_use_rclpy_spelling():
    assert m.Image.get_fields_and_field_types() == {
        "header": "std_msgs/Header", "height": "uint32", "width": "uint32", "encoding": "string",
        "is_bigendian": "uint8", "step": "uint32", "data": "sequence<uint8>"}
    assert m.CameraInfo.get_fields_and_field_types()["k"] == "double[9]"
    assert m.JointState.get_fields_and_field_types()["name"] == "sequence<string>"


@pytest.mark.parametrize("setter, error", [
    (lambda: m.Point(x=1), TypeError),  # an int in a float field: rclpy's C code would read garbage
    (lambda: m.Image(height=-1), ValueError),
    (lambda: m.Image(height=2**32), ValueError),
    (lambda: m.Image(height=np.uint32(3)), TypeError),
    (lambda: m.String(data=b"bytes"), TypeError),
    (lambda: m.PoseStamped(pose=m.Point()), TypeError),
    (lambda: m.CameraInfo(k=np.zeros(8)), ValueError),
    (lambda: m.JointState(name=["a", 1]), TypeError),
    (lambda: m.Bool(data=1), TypeError),
    (lambda: m.String(text="x"), TypeError),
])
def test_assignments_are_checked(setter, error):
    with pytest.raises(error):
        setter()


def test_unknown_attribute_is_refused():
    msg = m.String()
    with pytest.raises(AttributeError):
        msg.dat = "typo"


def test_sequence_fields_are_arrays_like_rclpy():
    js = m.JointState(position=np.array([1.0, 2.0]), velocity=[0.5])
    assert isinstance(js.position, array.array) and js.position.typecode == "d"
    assert list(js.position) == [1.0, 2.0] and list(js.velocity) == [0.5]
    img = m.Image(data=np.arange(6, dtype=np.uint8))
    assert isinstance(img.data, array.array) and img.data.typecode == "B" and list(img.data) == list(range(6))
    ci = m.CameraInfo(k=[float(i) for i in range(9)])
    assert isinstance(ci.k, np.ndarray) and ci.k.dtype == np.float64


@pytest.mark.parametrize("mutate, what", [
    (lambda b: b[:-1], "truncated"),
    (lambda b: b[:2], "shorter than the CDR header"),
    (lambda b: b"\x00\x07" + b[2:], "encapsulation"),
    (lambda b: b[:12] + struct.pack("<I", 10**6) + b[16:], "truncated"),  # frame_id length past the end
])
def test_decoder_rejects_malformed_data(mutate, what):
    raw = bytes(m.serialize(m.PoseStamped(header=m.Header(frame_id="base"))))
    with pytest.raises(MessageError, match=what):
        m.deserialize(mutate(raw), m.PoseStamped)


def test_decoder_rejects_bad_strings_bools_and_sequence_counts():
    bad_utf8 = b"\x00\x01\x00\x00" + struct.pack("<I", 3) + b"\xff\xfe\x00"
    with pytest.raises(MessageError, match="'data'"):
        m.deserialize(bad_utf8, m.String)
    no_nul = b"\x00\x01\x00\x00" + struct.pack("<I", 3) + b"abc"
    with pytest.raises(MessageError, match="NUL"):
        m.deserialize(no_nul, m.String)
    with pytest.raises(MessageError, match="boolean"):
        m.deserialize(b"\x00\x01\x00\x00\x02", m.Bool)
    huge_count = bytearray(m.serialize(m.Joy()))
    struct.pack_into("<I", huge_count, 20, 2**30)  # axes count: after header, stamp and frame_id ""
    with pytest.raises(MessageError, match="truncated"):
        m.deserialize(bytes(huge_count), m.Joy)


def test_byte_fields_are_one_byte_bytes_like_rclpy():
    status = m.DiagnosticStatus()
    assert status.level == b"\x00" == m.DiagnosticStatus.OK and m.DiagnosticStatus.ERROR == b"\x02"
    assert m.DiagnosticStatus.get_fields_and_field_types()["level"] == "octet"
    assert m.DiagnosticStatus.get_fields_and_field_types()["values"] == "sequence<diagnostic_msgs/KeyValue>"
    for bad in (1, b"", b"\x01\x02", "x", bytearray(b"\x01")):
        with pytest.raises(TypeError, match="'level'"):
            m.DiagnosticStatus(level=bad)
    with pytest.raises(TypeError, match="'values'"):
        m.DiagnosticStatus(values=[m.String()])
    raw = bytes(m.serialize(m.DiagnosticStatus(level=m.DiagnosticStatus.WARN, name="/r1/sim_node")))
    assert raw[4] == 1 and m.deserialize(raw, m.DiagnosticStatus).level == b"\x01"
