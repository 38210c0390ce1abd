"""Telling ROS 2 which node owns which endpoint: ``ros_discovery_info``, as rmw does it (Jazzy).

DDS discovery knows participants, readers and writers, but not nodes. Every
rmw_cyclonedds_cpp participant therefore publishes a
``rmw_dds_common/msg/ParticipantEntitiesInfo`` (:mod:`.graph_messages`) on the DDS topic
``ros_discovery_info`` (no ``rt`` prefix): its own gid and, per node, namespace, name and
the gids of the node's readers and writers. ``ros2 node list`` and ``ros2 node info`` are
built from those; an endpoint that no message claims shows as ``_CREATED_BY_BARE_DDS_APP_``.

What this module copies from the Jazzy sources:

* the writer (rmw_cyclonedds_cpp ``rmw_context_impl_s::init``): reliable, transient-local,
  keep-last 1, with the usual ``typehash=`` USER_DATA, so a ROS 2 process that starts
  later (its reader is transient-local too) gets the current state at once;
* a gid is the 16 bytes of the entity's DDS GUID (``convert_guid_to_gid``: ``memcpy`` of
  ``dds_guid_t.v``, and ``RMW_GID_STORAGE_SIZE`` is 16 in Jazzy);
* the whole state is published again on every change (rmw_dds_common ``Context::add_node_graph``,
  ``add_publisher_graph``, ``add_subscriber_graph`` and their ``remove_`` twins): a node
  created or destroyed, a publisher or subscription created or destroyed. Nodes are listed
  in creation order, their endpoints in creation order (``GraphCache::associate_writer`` appends).
"""

from __future__ import annotations

import threading
from typing import Iterable

import numpy as np

from robot_rl.ros.dds.graph_messages import Gid, NodeEntitiesInfo, ParticipantEntitiesInfo
from robot_rl.ros.dds.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from robot_rl.ros.dds.transport import Participant, Writer
from robot_rl.ros.messages import serialize

DISCOVERY_TOPIC = "ros_discovery_info"
DISCOVERY_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)


def gid_message(gid: bytes) -> Gid:
    """An ``rmw_dds_common/msg/Gid`` holding a 16-byte DDS GUID."""
    return Gid(data=np.frombuffer(gid, dtype=np.uint8).copy())


class GraphAnnouncer:
    """The participant's ``ros_discovery_info`` writer and the node table it publishes."""

    def __init__(self, participant: Participant) -> None:
        self._writer = Writer(participant, "/" + DISCOVERY_TOPIC, ParticipantEntitiesInfo, DISCOVERY_QOS,
                              dds_name=DISCOVERY_TOPIC)
        self.gid = participant.gid
        self._nodes: dict[int, NodeEntitiesInfo] = {}  # by id(node), in creation order
        self._lock = threading.Lock()

    def node_changed(self, key: int, namespace: str, name: str, reader_gids: Iterable[bytes],
                     writer_gids: Iterable[bytes]) -> None:
        """Set (add, or replace in place) one node's entry and publish the new state."""
        info = NodeEntitiesInfo(node_namespace=namespace, node_name=name,
                                reader_gid_seq=[gid_message(g) for g in reader_gids],
                                writer_gid_seq=[gid_message(g) for g in writer_gids])
        with self._lock:
            self._nodes[key] = info
            self._publish()

    def node_removed(self, key: int) -> None:
        with self._lock:
            if self._nodes.pop(key, None) is not None:
                self._publish()

    def message(self) -> ParticipantEntitiesInfo:
        """What was last published (or would be): this participant's gid and its nodes."""
        return ParticipantEntitiesInfo(gid=gid_message(self.gid), node_entities_info_seq=list(self._nodes.values()))

    def _publish(self) -> None:
        self._writer.write(serialize(self.message()))
