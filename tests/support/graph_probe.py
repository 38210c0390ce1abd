"""A plain Cyclone DDS process that reads ``ros_discovery_info`` the way a ROS 2 process does.

    python graph_probe.py NODE_FQN [NODE_FQN ...] [--timeout S]

Joins the domain of ``ROS_DOMAIN_ID`` with the DDS backend's discovery settings, reads
``ros_discovery_info`` with rmw_cyclonedds_cpp's reader QoS (reliable, transient-local,
keep-all) and the DDS built-in topics DCPSParticipant, DCPSPublication and
DCPSSubscription, until another participant's latest message lists exactly the given
nodes and every gid in it is a discovered endpoint of that participant. It then prints
one JSON object: that participant's gid, USER_DATA and nodes, each endpoint as
``{"gid": hex, "topic": DDS topic name}`` (from the built-in topics). Exit code 1 with
the last state seen on timeout.

The message type is declared here with cyclonedds-python's own IDL classes and decoded
by its own deserializer, so nothing of robot_rl's codec or type mapping is involved
(only its discovery settings, to reach the nodes under test).
"""

import argparse
import json
import sys
import time
from dataclasses import dataclass

from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsParticipant,
    BuiltinTopicDcpsPublication,
    BuiltinTopicDcpsSubscription,
)
from cyclonedds.core import InstanceState, SampleState, ViewState
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as t
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from robot_rl.ros.dds.config import cyclone_config, settings_from_env


@dataclass
class Gid(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: t.array[t.uint8, 16]


@dataclass
class NodeEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: t.bounded_str[256]
    node_name: t.bounded_str[256]
    reader_gid_seq: t.sequence[Gid]
    writer_gid_seq: t.sequence[Gid]


@dataclass
class ParticipantEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"):
    gid: Gid
    node_entities_info_seq: t.sequence[NodeEntitiesInfo]


ANY = SampleState.Any | ViewState.Any | InstanceState.Any


def hexgid(gid: Gid) -> str:
    return bytes(gid.data).hex()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("nodes", nargs="+")
    p.add_argument("--timeout", type=float, default=20.0)
    args = p.parse_args()
    want = set(args.nodes)

    settings = settings_from_env()
    _domain = Domain(settings.domain_id, cyclone_config(settings))
    dp = DomainParticipant(settings.domain_id)
    own = dp.guid.bytes.hex()
    qos = Qos(Policy.Reliability.Reliable(max_blocking_time=duration(infinite=True)),
              Policy.Durability.TransientLocal, Policy.History.KeepAll,
              Policy.DataRepresentation(use_cdrv0_representation=True))
    infos = DataReader(dp, Topic(dp, "ros_discovery_info", ParticipantEntitiesInfo), qos)
    builtin = {kind: BuiltinDataReader(dp, topic) for kind, topic in
               (("participant", BuiltinTopicDcpsParticipant), ("writer", BuiltinTopicDcpsPublication),
                ("reader", BuiltinTopicDcpsSubscription))}
    latest: dict[str, ParticipantEntitiesInfo] = {}
    endpoints: dict[str, dict] = {}  # gid hex -> kind, topic, participant
    user_data: dict[str, str] = {}
    result: dict = {}
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        for sample in infos.take(N=100):
            if hexgid(sample.gid) != own:
                latest[hexgid(sample.gid)] = sample
        for kind, reader in builtin.items():
            for s in reader.take(N=100):
                if kind == "participant":
                    data = s.qos[Policy.Userdata].data if Policy.Userdata in s.qos else b""
                    user_data[s.key.bytes.hex()] = data.decode("ascii", "replace")
                else:
                    endpoints[s.key.bytes.hex()] = {"kind": kind, "topic": s.topic_name,
                                                    "participant": s.participant_key.bytes.hex()}
        for pgid, info in latest.items():
            result = describe(pgid, info, endpoints, user_data)
            fqns = {n["fqn"] for n in result["nodes"]}
            if fqns == want and result["complete"]:
                print(json.dumps(result), flush=True)
                return 0
        time.sleep(0.05)
    print(json.dumps({"timeout": True, "last": result, "participants": sorted(latest)}), flush=True)
    return 1


def describe(pgid: str, info: ParticipantEntitiesInfo, endpoints: dict[str, dict], user_data: dict[str, str]) -> dict:
    """The message with each gid resolved through the built-in topics; ``complete`` if all resolved."""
    complete = pgid in user_data
    nodes = []
    for node in info.node_entities_info_seq:
        entry = {"namespace": node.node_namespace, "name": node.node_name,
                 "fqn": node.node_namespace.rstrip("/") + "/" + node.node_name}
        for kind, seq in (("reader", node.reader_gid_seq), ("writer", node.writer_gid_seq)):
            found = []
            for gid in seq:
                ep = endpoints.get(hexgid(gid))
                ok = ep is not None and ep["kind"] == kind and ep["participant"] == pgid
                complete = complete and ok
                found.append({"gid": hexgid(gid), "topic": ep["topic"] if ok else None})
            entry[kind + "s"] = found
        nodes.append(entry)
    return {"participant": pgid, "user_data": user_data.get(pgid), "nodes": nodes, "complete": complete}


if __name__ == "__main__":
    sys.exit(main())
