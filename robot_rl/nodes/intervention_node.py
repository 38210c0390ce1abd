"""intervention_node: a SpaceMouse, keyboard and/or gamepad (or none) -> ``/spacenav/twist`` and ``/spacenav/joy``.

A drop-in for spacenav_node that also serves the keyboard and the gamepad: it opens the devices of
``intervention.device`` raw (:func:`robot_rl.nodes.intervention.raw_device_config`) and
publishes what it reads at ``ros.input_hz`` in spacenav's conventions, robot_rl's
actions on Joy buttons 32-39 (the layout is in :mod:`robot_rl.nodes.intervention`). The actor
interprets it with the session's deadband, axis map, button meanings and intervene mode,
the same way whether this node or spacenav_node publishes. An unplugged device logs
one warning and then publishes neutral input (the human's intervention ends; the
policy resumes), as a device on the actor's own machine would. With ``device: none``
it publishes neutral input (the session graph starts no intervention node then).

Parameters: ``config``; ``topics.{spacenav_twist, spacenav_joy}``.
"""

from __future__ import annotations

import sys

from robot_rl.envs.inputs import FailSafeInput
from robot_rl.errors import ConfigError
from robot_rl.nodes.common import (
    StatusPublisher,
    declare_topics,
    load_session,
    log_core_to_console,
    node_base,
    qos,
)
from robot_rl.nodes.intervention import encode, raw_device_config
from robot_rl.ros import convert, msgs, run_node

Node = node_base()


class InterventionNode(Node):
    def __init__(self, device=None) -> None:
        super().__init__("intervention_node")
        log_core_to_console(self.get_name())
        cfg, path = load_session(self)
        topics = declare_topics(self, ["spacenav_twist", "spacenav_joy"])
        if device is None and "simulated" in cfg.intervention.device.split("+"):
            raise ConfigError(f"{path}: intervention.device is '{cfg.intervention.device}': intervention_node serves "
                              "spacemouse, keyboard, gamepad or none (the simulated intervener runs inside the actor)")
        self.twist_pub = self.create_publisher(msgs.Twist, topics["spacenav_twist"], qos("event"))
        self.joy_pub = self.create_publisher(msgs.Joy, topics["spacenav_joy"], qos("event"))
        self.published = 0
        self.status_pub = StatusPublisher(self, lambda: {"device": cfg.intervention.device, "messages": self.published,
                                                         "device_lost": self.device.error}, cfg.ros.status_hz,
                                          hardware_id=f"input {cfg.intervention.device}")
        if device is None:
            from robot_rl_drivers.input import make_input_device

            device = make_input_device(raw_device_config(cfg.intervention))  # last: nothing after it can fail
        self.device = FailSafeInput(device)
        self.create_timer(1.0 / cfg.ros.input_hz, self.tick)

    def tick(self) -> None:
        twist, buttons = encode(self.device.read())
        stamp = self.get_clock().now().nanoseconds * 1e-9  # the node's clock: the sim's time with use_sim_time
        self.twist_pub.publish(convert.twist_msg(twist))
        self.joy_pub.publish(convert.joy_msg(twist, buttons, stamp))
        self.published += 1

    def destroy_node(self) -> None:
        device = getattr(self, "device", None)
        if device is not None:
            device.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(InterventionNode, args)


if __name__ == "__main__":
    sys.exit(main())
