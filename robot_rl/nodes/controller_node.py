"""controller_node: runs the arm's Robot backend; robot state out, targets in (robot_rl.nodes.controller).

Publishes ``/joint_states`` (arm joints + ``gripper``) and ``/robot/tcp_pose``,
``tcp_twist``, ``tcp_wrench`` at ``ros.state_hz`` (125 Hz by default, at least 100); takes
``/robot/target_pose``, ``/robot/gripper/command`` and a joint reset's ``/robot/posture``.
It never moves before it has the measured pose, and holds the current pose (and the
configured posture) when targets stop for ``ros.watchdog_s``.
On shutdown it holds, then releases the robot.

tf (:mod:`robot_rl.nodes.frames`): ``ros.frame_id`` -> ``ros.tcp_frame_id`` on ``tf`` at
the state rate, with the pose and stamp of ``/robot/tcp_pose``; every camera that has a
``mount`` (``cameras.<name>.mount``, the hand-eye calibration) on ``tf_static``, once.

Parameters: ``config`` (``robot.backend: franka``); ``topics.{joint_states, tcp_pose,
tcp_twist, tcp_wrench, target_pose, gripper_command, posture}``; ``joint_prefix`` (default
``fr3_joint``); ``robot_lib`` (the libfranka binding module, default ``pylibfranka``).
"""

from __future__ import annotations

import sys
import time

from robot_rl.errors import ConfigError
from robot_rl.nodes.common import (
    RobotStatePublisher,
    StatusPublisher,
    TransformPublisher,
    declare_topics,
    load_session,
    log_core_to_console,
    node_base,
    param_or,
    subscribe_commands,
)
from robot_rl.nodes.controller import ControllerCore
from robot_rl.nodes.frames import mount_transforms, tcp_transform
from robot_rl.nodes.topics import ROBOT_COMMANDS, ROBOT_STATE
from robot_rl.ros import run_node

Node = node_base()


class ControllerNode(Node):
    def __init__(self) -> None:
        super().__init__("controller_node")
        log_core_to_console(self.get_name())
        cfg, path = load_session(self)
        topics = declare_topics(self, [*ROBOT_STATE, *ROBOT_COMMANDS])
        prefix = param_or(self, "joint_prefix", "fr3_joint")
        lib = param_or(self, "robot_lib", "pylibfranka")
        if cfg.robot.backend != "franka":
            raise ConfigError(f"{path}: robot.backend is '{cfg.robot.backend}': controller_node runs real arms "
                              "('franka'); the sim arm runs in sim_node")
        from robot_rl_drivers.robots import make_robot

        self.state_pub = RobotStatePublisher(self, topics, cfg.ros.frame_id, [f"{prefix}{i}" for i in range(1, 8)])
        self.frames = (cfg.ros.frame_id, cfg.ros.tcp_frame_id)
        self.tf = TransformPublisher(self, mount_transforms(cfg.cameras, *self.frames), time.time())
        subscribe_commands(self, topics, lambda: self.core)
        self.status_pub = StatusPublisher(self, lambda: self.core.status(), cfg.ros.status_hz,
                                          hardware_id=f"robot {cfg.robot.backend}")
        self.create_timer(1.0 / cfg.ros.state_hz, self.tick)
        self.robot = make_robot(cfg.robot, file=str(path), node=self, lib=lib)  # last: nothing after it can fail
        self.core = ControllerCore(self.robot, cfg.ros.watchdog_s)

    def tick(self) -> None:
        state = self.core.poll()
        if state is not None:
            stamp = time.time()
            self.state_pub.publish(state, stamp)
            self.tf.publish([tcp_transform(state, *self.frames)], stamp)
        for event in self.core.pop_events():
            self.status_pub.publish(event)

    def destroy_node(self) -> None:
        try:
            self.robot.hold()
        finally:
            self.robot.close()
            super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(ControllerNode, args)


if __name__ == "__main__":
    sys.exit(main())
