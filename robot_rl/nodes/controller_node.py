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

Parameters: ``config`` (a real arm's ``robot.backend``: ``franka``, ``ros2_control``, ...);
``topics.{joint_states, tcp_pose, tcp_twist, tcp_wrench, target_pose, gripper_command,
posture}``; ``joint_prefix`` (default ``fr3_joint``: a Franka's joints are
``<prefix>1..7``; a ros2_control arm publishes its configured ``joint_names``);
``robot_lib`` (the hardware library module; empty, the default: the backend's own,
``pylibfranka`` or ``ur_rtde``).
"""

from __future__ import annotations

import sys
import time

from robot_rl.errors import ConfigError, DeviceError
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

WAIT_WARNING_S = 5.0  # a topics backend with no state after this long: say why, once


class ControllerNode(Node):
    def __init__(self) -> None:
        super().__init__("controller_node")
        log_core_to_console(self.get_name())
        cfg, path = load_session(self)
        topics = declare_topics(self, [*ROBOT_STATE, *ROBOT_COMMANDS])
        prefix = param_or(self, "joint_prefix", "fr3_joint")
        lib = param_or(self, "robot_lib", "") or None  # "": the backend's own library
        from robot_rl_drivers.robots import arm_joint_names, make_robot, robot_spec, robot_specs

        if robot_spec(cfg.robot.backend).node != "controller_node":
            ours = ", ".join(f"'{s.name}'" for s in robot_specs() if s.node == "controller_node")
            raise ConfigError(f"{path}: robot.backend is '{cfg.robot.backend}': controller_node runs real arms "
                              f"({ours}); the sim arm runs in sim_node")

        joints = arm_joint_names(cfg.robot, prefix, file=str(path))
        self.state_pub = RobotStatePublisher(self, topics, cfg.ros.frame_id, joints)
        self.frames = (cfg.ros.frame_id, cfg.ros.tcp_frame_id)
        self.tf = TransformPublisher(self, mount_transforms(cfg.cameras, *self.frames), time.time())
        subscribe_commands(self, topics, lambda: self.core)
        self.status_pub = StatusPublisher(self, lambda: self.core.status(), cfg.ros.status_hz,
                                          hardware_id=f"robot {cfg.robot.backend}")
        self.create_timer(1.0 / cfg.ros.state_hz, self.tick)
        self._started, self._said_waiting = time.monotonic(), False
        self.robot = make_robot(cfg.robot, file=str(path), node=self, lib=lib)  # last: nothing after it can fail
        self.core = ControllerCore(self.robot, cfg.ros.watchdog_s)

    def _robot_ready(self) -> bool:
        """A backend over topics (ros2_control) has no state until the arm's controller publishes
        one: wait for it (the core never sees a robot without state), and say once what is missing."""
        if getattr(self.robot, "ready", True):
            return True
        if not self._said_waiting and time.monotonic() - self._started > WAIT_WARNING_S:
            self._said_waiting = True
            try:
                self.robot.wait_until_ready(0.0)
            except DeviceError as err:
                self.get_logger().warning(f"{err}; still waiting")
        return False

    def tick(self) -> None:
        if not self._robot_ready():
            return
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
