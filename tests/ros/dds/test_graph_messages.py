"""rmw_dds_common's graph messages: Jazzy's hashes and bytes, bounded strings and ``char`` arrays.

rosbags' Jazzy store reads ``char`` as IDL ``char``; rosidl (rosidl_adapter's
``MSG_TYPE_TO_IDL``) turns a ``.msg`` ``char`` into ``uint8``, and that is what the hashes
of a Jazzy build hold. So the cross-checks give rosbags the definitions with ``uint8[16]``.
"""

from __future__ import annotations

import numpy as np
import pytest
from rosbags import typesys as rosbags_typesys

from robot_rl.ros.dds.graph_messages import Gid, NodeEntitiesInfo, ParticipantEntitiesInfo
from robot_rl.ros.errors import MessageError
from robot_rl.ros.messages import deserialize, serialize, type_hash
from robot_rl.ros.messages.idl import idl_type

# the type_hashes of a Jazzy build's share/rmw_dds_common/msg/*.json
JAZZY = {
    Gid: "RIHS01_ab6f21cfbb0a6dbb837161e1110c2051a2850ed9f9c53944d7115d9bcebedf71",
    NodeEntitiesInfo: "RIHS01_8ffef65ee2d088c63b1e8fcd31e800ba9fc8dbe0ee15ca60d1676de5218087a7",
    ParticipantEntitiesInfo: "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
}


# rmw_dds_common/msg/*.msg at jazzy, with Gid's ``char[16]`` as rosidl maps it
ROSIDL_TEXTS = {
    Gid: "uint8[16] data",
    NodeEntitiesInfo: "string<=256 node_namespace\nstring<=256 node_name\nGid[] reader_gid_seq\nGid[] writer_gid_seq",
    ParticipantEntitiesInfo: "Gid gid\nNodeEntitiesInfo[] node_entities_info_seq",
}


@pytest.fixture(scope="module")
def store():
    ts = rosbags_typesys.get_typestore(rosbags_typesys.Stores.EMPTY)
    for cls, text in ROSIDL_TEXTS.items():
        ts.register(rosbags_typesys.get_types_from_msg(text, cls._type))
    return ts


def sample() -> ParticipantEntitiesInfo:
    def gid(seed: int) -> Gid:
        return Gid(data=np.arange(seed, seed + 16, dtype=np.uint8))

    return ParticipantEntitiesInfo(gid=gid(1), node_entities_info_seq=[
        NodeEntitiesInfo(node_namespace="/robot", node_name="arm", reader_gid_seq=[gid(20)],
                         writer_gid_seq=[gid(40), gid(60)]),
        NodeEntitiesInfo(node_namespace="/", node_name="c" * 256),  # exactly at the bound
    ])


@pytest.mark.parametrize("cls", list(JAZZY))
def test_hashes_are_jazzys_and_rosbags_agrees(cls, store):
    assert type_hash(cls) == JAZZY[cls] == store.hash_rihs01(cls._type)


def test_bytes_equal_rosbags_and_decode_both_ways(store):
    msg = sample()
    ours = bytes(serialize(msg))
    R = store.types

    def rb_gid(g):
        return R["rmw_dds_common/msg/Gid"](data=np.asarray(g.data, dtype=np.uint8))

    theirs = R["rmw_dds_common/msg/ParticipantEntitiesInfo"](gid=rb_gid(msg.gid), node_entities_info_seq=[
        R["rmw_dds_common/msg/NodeEntitiesInfo"](node_namespace=n.node_namespace, node_name=n.node_name,
                                                 reader_gid_seq=[rb_gid(g) for g in n.reader_gid_seq],
                                                 writer_gid_seq=[rb_gid(g) for g in n.writer_gid_seq])
        for n in msg.node_entities_info_seq])
    assert ours == bytes(store.serialize_cdr(theirs, ParticipantEntitiesInfo._type, little_endian=True))
    assert deserialize(ours, ParticipantEntitiesInfo) == msg
    back = store.deserialize_cdr(ours, ParticipantEntitiesInfo._type)
    assert back.node_entities_info_seq[0].writer_gid_seq[1].data.tolist() == list(range(60, 76))


def test_fields_use_rclpys_spelling():
    assert Gid.get_fields_and_field_types() == {"data": "uint8[16]"}
    assert NodeEntitiesInfo.get_fields_and_field_types() == {
        "node_namespace": "string<256>", "node_name": "string<256>",
        "reader_gid_seq": "sequence<rmw_dds_common/Gid>", "writer_gid_seq": "sequence<rmw_dds_common/Gid>"}


def test_bounded_strings_and_fixed_arrays_are_checked():
    info = NodeEntitiesInfo()
    info.node_name = "n" * 256
    with pytest.raises(ValueError, match="at most 256 bytes"):
        info.node_name = "n" * 257
    with pytest.raises(ValueError, match="at most 256 bytes"):
        info.node_namespace = "/" + "é" * 128  # 257 UTF-8 bytes in 129 characters
    with pytest.raises(ValueError, match="length 16"):
        Gid(data=[0] * 15)
    with pytest.raises((ValueError, OverflowError)):  # numpy's OverflowError for a uint8 out of range
        Gid(data=[256] + [0] * 15)
    with pytest.raises(TypeError):
        NodeEntitiesInfo(reader_gid_seq=[b"\x00" * 16])  # a gid is a Gid, not bytes


def test_decoder_refuses_an_over_long_bounded_string_and_truncated_data():
    info = NodeEntitiesInfo(node_namespace="/", node_name="ok")
    object.__setattr__(info, "_node_name", "x" * 300)  # bypass the setter, as a foreign writer could
    with pytest.raises(MessageError, match="'node_name': string of 300 bytes, over its bound of 256"):
        deserialize(serialize(info), NodeEntitiesInfo)
    data = bytes(serialize(sample()))
    with pytest.raises(MessageError, match="truncated"):
        deserialize(data[:-3], ParticipantEntitiesInfo)
    huge_count = data[:20] + b"\xff\xff\xff\x7f" + data[24:]  # node_entities_info_seq's count
    with pytest.raises(MessageError, match="node_entities_info_seq"):
        deserialize(huge_count, ParticipantEntitiesInfo)


def test_dds_type_names_and_bounded_members_match_rmw():
    from cyclonedds.idl import types as t

    struct = idl_type(NodeEntitiesInfo)
    assert struct.__idl_typename__ == "rmw_dds_common::msg::dds_::NodeEntitiesInfo_"
    hints = struct.__annotations__
    assert hints["node_name"] == t.bounded_str[256]
    assert idl_type(Gid).__annotations__["data"] == t.array[t.uint8, 16]
