"""A stand-in for a ROS 2 Jazzy process in LOCALHOST mode: plain Cyclone DDS, configured as rmw does it.

    python rmw_localhost_peer.py [--timeout S]

Joins ``ROS_DOMAIN_ID`` with rmw_cyclonedds_cpp's LOCALHOST configuration (no multicast,
participant index auto up to 32, peer ``localhost``; ``CYCLONEDDS_URI`` appended), exchanges
``std_msgs/String`` with a DDS-backend node (reads ``/late/from_robot_rl``, writes
``/late/to_robot_rl`` every 0.2 s), prints one JSON line with what it received, and exits
0 once it has received a message and published for another 2 s (so the node gets some),
1 on timeout.

One difference from rmw's string, and why: Cyclone 0.10 (what Jazzy's rmw_cyclonedds_cpp
runs) announces itself only to the configured peers, i.e. to the localhost ports, while
Cyclone 11 (this wheel) by default also announces itself to its own LAN address.
``AddLocalhost="false"`` turns that off, so this process reaches a robot_rl process only
over loopback, as a ROS 2 peer does. That is the path a Cyclone 11 participant bound to
the LAN interface ignores, and what makes a late ROS 2 peer differ from a late robot_rl
process (tests/ros/dds/test_late_joiner.py).
"""

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.pub import DataWriter
from cyclonedds.qos import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

RMW_LOCALHOST = ("<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General><Discovery>"
                 "<ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>"
                 '<Peers AddLocalhost="false"><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,')


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=float, default=30.0)
    args = p.parse_args()
    domain_id = int(os.environ["ROS_DOMAIN_ID"])
    _domain = Domain(domain_id, RMW_LOCALHOST + os.environ.get("CYCLONEDDS_URI", ""))
    dp = DomainParticipant(domain_id)
    qos = Qos(Policy.Reliability.Reliable(max_blocking_time=duration(infinite=True)), Policy.History.KeepLast(10),
              Policy.Durability.Volatile, Policy.DataRepresentation(use_cdrv0_representation=True))
    reader = DataReader(dp, Topic(dp, "rt/late/from_robot_rl", String), qos)
    writer = DataWriter(dp, Topic(dp, "rt/late/to_robot_rl", String), qos)
    received: list[str] = []
    start = time.monotonic()
    got_at = None
    i = 0
    while time.monotonic() - start < args.timeout:
        received += [s.data for s in reader.take(N=10)]
        if received and got_at is None:
            got_at = time.monotonic()
        writer.write(String(data=f"from peer {i}"))
        i += 1
        if got_at is not None and time.monotonic() - got_at > 2.0:
            break
        time.sleep(0.2)
    print(json.dumps({"received": received[:5], "after_s": None if got_at is None else round(got_at - start, 2)}),
          flush=True)
    return 0 if received else 1


if __name__ == "__main__":
    sys.exit(main())
