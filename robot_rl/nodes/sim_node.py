"""sim_node: one MuJoCo world in real time, on the same topics as a real robot (robot_rl.nodes.sim).

Publishes what the controller and camera nodes publish (``/joint_states``,
``/robot/tcp_*`` at ``ros.state_hz``; per camera ``image_raw`` rgb8 and
``camera_info`` at its fps, rendered only while someone subscribes) and takes the same
commands (``/robot/target_pose``, ``/robot/gripper/command``, ``/robot/posture``) under
the same controller rules and watchdog. Sim only: ``/sim/reset`` -> ``/sim/reset_done``, ground truth on
``/sim/task_state`` and ``/sim/success`` (see :mod:`robot_rl.nodes.topics`).

Parameters: ``config``; ``topics.{joint_states, tcp_pose, tcp_twist, tcp_wrench,
target_pose, gripper_command, posture, sim_reset, sim_reset_done, sim_task_state,
sim_success}``;
per configured camera ``topics.cameras.<name>.{image, info}``; ``joint_prefix``
(default ``joint``).
"""

from __future__ import annotations

import json
import sys
import time

from robot_rl.nodes.common import (
    RobotStatePublisher,
    StatusPublisher,
    declare_topics,
    guarded,
    load_session,
    log_core_to_console,
    node_base,
    param_or,
    qos,
    subscribe_commands,
)
from robot_rl.nodes.sim import SimServer
from robot_rl.nodes.task import parse_reset_request
from robot_rl.nodes.topics import ROBOT_COMMANDS, ROBOT_STATE, SIM, camera_frame_id, task_state_names
from robot_rl.ros import convert, msgs, run_node

Node = node_base()


class SimNode(Node):
    def __init__(self) -> None:
        super().__init__("sim_node")
        log_core_to_console(self.get_name())
        cfg, _ = load_session(self)
        topics = declare_topics(self, [*ROBOT_STATE, *ROBOT_COMMANDS, *SIM], list(cfg.cameras), ["image", "info"])
        prefix = param_or(self, "joint_prefix", "joint")
        self.sim = sim = SimServer(cfg)
        self.state_pub = RobotStatePublisher(self, topics, cfg.ros.frame_id, [f"{prefix}{i}" for i in range(1, 8)])
        self.truth_pub = self.create_publisher(msgs.JointState, topics["sim_task_state"], qos("stream_pub"))
        self.success_pub = self.create_publisher(msgs.Bool, topics["sim_success"], qos("stream_pub"))
        self.done_pub = self.create_publisher(msgs.String, topics["sim_reset_done"], qos("event"))
        self.truth_names = task_state_names(sim.state_dim)
        controller = sim.controller
        subscribe_commands(self, topics, lambda: controller)
        self.create_subscription(msgs.String, topics["sim_reset"],
                                 guarded(lambda m: self.on_reset(parse_reset_request(m.data))), qos("event"))
        for name, cam in cfg.cameras.items():
            image = self.create_publisher(msgs.Image, topics["cameras"][name]["image"], qos("image_pub"))
            info = self.create_publisher(msgs.CameraInfo, topics["cameras"][name]["info"], qos("image_pub"))
            self.create_timer(1.0 / cam.fps, lambda n=name, i=image, c=info: self.publish_camera(n, i, c))
        self.status_pub = StatusPublisher(self, sim.status, cfg.ros.status_hz)
        self.create_timer(1.0 / cfg.ros.state_hz, self.tick)

    def tick(self) -> None:
        state = self.sim.tick()
        if state is not None:
            self.publish_state(state)
        for event in self.sim.controller.pop_events():
            self.status_pub.publish(event)

    def publish_state(self, state) -> None:
        stamp = time.time()
        values, success = self.sim.ground_truth()
        self.state_pub.publish(state, stamp)
        self.truth_pub.publish(msgs.JointState(header=convert.header(stamp, ""), name=self.truth_names,
                                               position=values.tolist()))
        self.success_pub.publish(msgs.Bool(data=success))

    def on_reset(self, request: dict) -> None:
        answer = self.sim.reset(request)
        if self.sim.controller.state is not None:
            self.publish_state(self.sim.controller.state)
        self.done_pub.publish(msgs.String(data=json.dumps(answer)))

    def publish_camera(self, name: str, image_pub, info_pub) -> None:
        if image_pub.get_subscription_count() == 0 and info_pub.get_subscription_count() == 0:
            return  # rendering costs ~2 ms per image on a CPU: only for someone listening
        image, stamp, frame = self.sim.render(name), time.time(), camera_frame_id(name)
        image_pub.publish(convert.image_to_msg(image, stamp, frame))
        info_pub.publish(convert.camera_info_msg(image.shape[1], image.shape[0], self.sim.intrinsics(name),
                                                 stamp, frame))

    def destroy_node(self) -> None:
        self.sim.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(SimNode, args)


if __name__ == "__main__":
    sys.exit(main())
