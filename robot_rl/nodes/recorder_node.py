"""recorder_node: the session's robot-plane topics into a rosbag2 MCAP bag, with or without ROS 2.

Started by the session graph when ``ros.record.enabled`` (which topics, and why:
:mod:`robot_rl.nodes.recorder`). It writes a new bag folder under ``ros.record.dir``
(:class:`robot_rl.ros.bag.writer.BagWriter`: ``metadata.yaml`` + one ``.mcap``), the
layout ``ros2 bag record -s mcap`` writes, so ``ros2 bag info``, ``ros2 bag play`` and
Foxglove read it.

Subscriptions are raw on both backends: the node never decodes a message, it stores
the encapsulated CDR bytes it receives (rclpy's ``raw=True`` hands over the same bytes
``ros2 bag record`` stores). Each message is stamped with its arrival (wall clock, ns),
as ``ros2 bag record`` does without ``--use-sim-time``.

Every ``ros.record.flush_s`` the chunk in progress is written and fsynced and
``metadata.yaml`` rewritten, so a crash loses at most that much; Ctrl-C (or the launcher
stopping the graph) finishes the file. ``~/status`` reports the bag's path and the
messages written and flushed per topic.

Parameters: ``config``; ``record.topics``, ``record.types``, ``record.kinds`` (string arrays).
"""

from __future__ import annotations

import sys
import time

from robot_rl.nodes.common import StatusPublisher, load_session, log_core_to_console, node_base
from robot_rl.nodes.recorder import bag_path, offered_depth, parse_parameters, subscription_depth
from robot_rl.ros import msgs, run_node
from robot_rl.ros.errors import ParameterError

Node = node_base()


def _qos(kind: str):
    from robot_rl import ros

    return ros.QoSProfile(
        depth=subscription_depth(kind),
        reliability=ros.ReliabilityPolicy.BEST_EFFORT if kind == "clock" else ros.ReliabilityPolicy.RELIABLE,
        durability=ros.DurabilityPolicy.TRANSIENT_LOCAL if kind == "static" else ros.DurabilityPolicy.VOLATILE)


class RecorderNode(Node):
    def __init__(self) -> None:
        super().__init__("recorder_node")
        log_core_to_console(self.get_name())
        from robot_rl import __version__, ros
        from robot_rl.ros.bag.schema import qos_profile
        from robot_rl.ros.bag.writer import BagWriter

        cfg, path = load_session(self)
        arrays = []
        for key in ("topics", "types", "kinds"):
            self.declare_parameter(f"record.{key}", ros.Parameter.Type.STRING_ARRAY)
            arrays.append(list(self.get_parameter(f"record.{key}").value or []))
        try:
            topics = parse_parameters(*arrays)
        except ValueError as err:
            raise ParameterError(f"node '{self.get_name()}': {err}") from None
        settings = cfg.ros.record
        self.writer = BagWriter(bag_path(settings.dir), compression=settings.compression,
                                chunk_size=settings.chunk_kib * 1024,
                                custom_data={"recorded_by": f"robot_rl {__version__} recorder_node",
                                             "config": str(path)})
        for topic in topics:
            short = topic.type_name.split("/")[-1]
            if short not in msgs.NAMES:
                raise ParameterError(f"node '{self.get_name()}': topic {topic.name} has type {topic.type_name}, "
                                     "which robot_rl's messages do not include")
            reliability = "best_effort" if topic.kind == "clock" else "reliable"
            durability = "transient_local" if topic.kind == "static" else "volatile"
            slot: list = []  # the bag channel, known once the subscription has resolved the name
            sub = self.create_subscription(getattr(msgs, short), topic.name, self._writer_for(slot),
                                           _qos(topic.kind), raw=True)
            slot.append(self.writer.add_topic(sub.topic_name, topic.type_name,
                                              [qos_profile(offered_depth(topic.kind), reliability, durability)]))
        self.writer.flush()  # metadata.yaml lists every topic from the start
        self.get_logger().info(f"recording {len(topics)} topics into {self.writer.path}")
        self.status_pub = StatusPublisher(self, self.figures, cfg.ros.status_hz)
        self.create_timer(settings.flush_s, self.writer.flush)

    def _writer_for(self, slot: list):
        write = self.writer.write

        def on_message(data: bytes) -> None:  # no message arrives before the node spins
            write(slot[0], data, time.time_ns())

        return on_message

    def figures(self) -> dict:
        stats = self.writer.stats()
        return {"bag": str(self.writer.path), "messages": stats.messages, "flushed": stats.flushed,
                "flushes": stats.flushes, "bytes": stats.bytes, "per_topic": stats.per_topic}

    def destroy_node(self) -> None:
        writer = getattr(self, "writer", None)
        if writer is not None:
            writer.close()
            print(f"recorder_node: wrote {writer.stats().messages} messages into {writer.path}", flush=True)
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(RecorderNode, args)


if __name__ == "__main__":
    sys.exit(main())
