"""rmw_dds_common's graph messages (Jazzy), which ROS 2 reads to learn which node owns which endpoint.

Every rmw_cyclonedds_cpp participant publishes a ``ParticipantEntitiesInfo`` on the DDS
topic ``ros_discovery_info``; ``ros2 node list`` and ``ros2 node info`` are built from
them (:mod:`robot_rl.ros.dds.graph` publishes ours). The texts are those of
ros2/rmw_dds_common's ``msg/*.msg`` at the jazzy branch, so the RIHS01 hashes and the
CDR match rmw's. Internal to the DDS backend: node code never uses them, and under the
rclpy backend rmw publishes its own.
"""

from __future__ import annotations

from robot_rl.ros.messages.base import Message


class Gid(Message, type_name="rmw_dds_common/msg/Gid", definition="char[16] data"):
    """A DDS GUID (12-byte prefix + 4-byte entity id) as rmw_cyclonedds_cpp copies it."""


class NodeEntitiesInfo(Message, type_name="rmw_dds_common/msg/NodeEntitiesInfo", definition="""\
string<=256 node_namespace
string<=256 node_name
Gid[] reader_gid_seq
Gid[] writer_gid_seq
"""):
    pass


class ParticipantEntitiesInfo(Message, type_name="rmw_dds_common/msg/ParticipantEntitiesInfo", definition="""\
Gid gid
NodeEntitiesInfo[] node_entities_info_seq
"""):
    pass
