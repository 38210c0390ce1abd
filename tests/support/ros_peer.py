"""A second process for the DDS pub/sub tests: publishes or echoes one topic, then exits.

    python ros_peer.py publish TOPIC KIND [--count N] [--period S] [--transient-local]
                                         [--best-effort] [--no-wait] [--linger S]
    python ros_peer.py echo TOPIC KIND [--count N] [--timeout S] [--best-effort]

KIND is ``image``, ``pose``, ``string`` or ``bad_utf8`` (a ``std_msgs/String`` whose
bytes are not UTF-8, written as raw CDR: Cyclone accepts it, our decoder must not).
``echo`` prints one JSON line per message. Uses the DDS backend explicitly.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time

import numpy as np

from robot_rl.ros import convert
from robot_rl.ros import messages as m
from robot_rl.ros.dds import api as ros

TYPES = {"image": m.Image, "pose": m.PoseStamped, "string": m.String, "bad_utf8": m.String}


def make(kind: str, i: int):
    if kind == "image":
        image = np.full((48, 64, 3), i % 256, dtype=np.uint8)
        image[0, 0] = (1, 2, 3)
        return convert.image_to_msg(image, time.time(), "peer_cam")
    if kind == "pose":
        return convert.pose_stamped_msg(np.array([0.1 * i, 0.2, 0.3]), np.array([0.5, 0.5, -0.5, 0.5]),
                                        time.time(), "base")
    if kind == "string":
        return m.String(data=f"hello {i}")
    raw = b"\xff\xfebad"
    return b"\x00\x01\x00\x00" + struct.pack("<I", len(raw) + 1) + raw + b"\x00"


def describe(kind: str, msg) -> dict:
    if kind == "image":
        image, stamp = convert.image_from_msg(msg)
        return {"shape": list(image.shape), "value": int(image[1, 1, 0]), "corner": image[0, 0].tolist(),
                "frame_id": msg.header.frame_id}
    if kind == "pose":
        pos, quat = convert.pose_from_msg(msg)
        return {"pos": pos.tolist(), "quat_wxyz": quat.tolist()}
    return {"data": msg.data}


def qos(args) -> ros.QoSProfile:
    return ros.QoSProfile(
        depth=args.depth,
        reliability=ros.ReliabilityPolicy.BEST_EFFORT if args.best_effort else ros.ReliabilityPolicy.RELIABLE,
        durability=ros.DurabilityPolicy.TRANSIENT_LOCAL if args.transient_local else ros.DurabilityPolicy.VOLATILE)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["publish", "echo"])
    p.add_argument("topic")
    p.add_argument("kind", choices=sorted(TYPES))
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--period", type=float, default=0.02)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--linger", type=float, default=0.5)
    p.add_argument("--transient-local", action="store_true")
    p.add_argument("--best-effort", action="store_true")
    p.add_argument("--no-wait", action="store_true", help="publish without waiting for a subscriber")
    args = p.parse_args()

    ros.init(args=[])
    node = ros.Node(f"peer_{args.mode}")
    try:
        if args.mode == "publish":
            pub = node.create_publisher(TYPES[args.kind], args.topic, qos(args))
            deadline = time.monotonic() + args.timeout
            while not args.no_wait and pub.get_subscription_count() == 0:
                if time.monotonic() > deadline:
                    print("no subscriber", file=sys.stderr)
                    return 3
                time.sleep(0.01)
            for i in range(args.count):
                pub.publish(make(args.kind, i))
                time.sleep(args.period)
            time.sleep(args.linger)  # keep the writer (and transient-local history) alive a moment
        else:
            got: list[dict] = []
            node.create_subscription(TYPES[args.kind], args.topic,
                                     lambda msg: got.append(describe(args.kind, msg)), qos(args))
            print(json.dumps({"ready": True}), flush=True)
            received, deadline = 0, time.monotonic() + args.timeout
            while received < args.count and time.monotonic() < deadline:
                ros.spin_once(node, timeout_sec=0.05)
                for item in got:
                    print(json.dumps(item), flush=True)
                received += len(got)
                got.clear()
    finally:
        node.destroy_node()
        ros.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
