"""The ``ros2_control_fzi`` Robot rig: a 6-joint UR5e behind FZI's cartesian_compliance_controller,
driven by ``Ros2ControlRobot`` on a recording node (as tests/drivers/robots/test_ros2_control.py).

It is the ``franka_ros2`` rig's machinery (contract_rigs.FrankaRos2Rig) with the other topic
contract: the "arm" is the state this rig publishes (pose in ``base_link``, the UR's six
joints, a force-torque reading in ``tool0``) and stays at HOME, so what the backend does
shows in the targets it publishes. It stops itself the way a compliance controller's
cell does: the wrist sensor saturates (the arm holds with a fault until ``recover()``).
"""

from __future__ import annotations

import time

import numpy as np
from contract_rigs import FrankaRos2Rig
from fake_ros_node import RecordingNode

from robot_rl.arms import UR_JOINT_NAMES

PREFIX = "/cartesian_compliance_controller"


class FziRos2ControlRig(FrankaRos2Rig):
    name = "ros2_control_fzi"
    dof = 6
    has_posture = False
    JOINTS = list(UR_JOINT_NAMES)
    SATURATED = np.array([0.0, 0.0, 1000.0, 0.0, 0.0, 0.0])  # N: beyond force_limit (150 N)

    def __init__(self) -> None:
        from robot_rl.config.loader import build
        from robot_rl.config.sections import ControllerConfig, RobotConfig, WorkspaceConfig
        from robot_rl_drivers.robots.ros2_control.robot import Ros2ControlRobot
        from robot_rl_drivers.robots.ros2_control.settings import Ros2ControlSettings

        self.node = RecordingNode()
        self.live = True
        self.saturated = False
        cfg = RobotConfig(backend="ros2_control", reset_pos=tuple(self.HOME), workspace=WorkspaceConfig(
            pos_low=(0.3, -0.2, 0.1), pos_high=(0.6, 0.2, 0.5)), controller=ControllerConfig(watchdog_s=2.0),
            hardware={"contract": "cartesian_controllers", "joint_names": self.JOINTS,
                      "state_timeout_s": self.STATE_TIMEOUT_S,
                      "recovery_commands": [["ros2", "control", "switch_controllers", "--activate",
                                             "cartesian_compliance_controller"]]})
        hw = build(Ros2ControlSettings, cfg.hardware, file="contracts.yaml", where="robot.hardware")
        self.robot = Ros2ControlRobot(cfg, hw, self.node, run=self._run_recovery)
        self.publish_hz = hw.publish_hz
        self.send_state()
        self.start = (self.HOME.copy(), self.DOWN.copy())

    def send_state(self) -> None:
        from robot_rl.ros import convert

        t = time.time()
        self.node.deliver(f"{PREFIX}/current_pose", convert.pose_stamped_msg(self.HOME, self.DOWN, t, "base_link"))
        q = np.linspace(0.1, 0.6, 6)
        self.node.deliver("/joint_states", convert.joint_state_msg(self.JOINTS, q, q * 0.0, q * 2.0, t))
        wrench = self.SATURATED if self.saturated else np.array([0.5, -0.2, 3.0, 0.01, 0.0, 0.02])
        self.node.deliver(f"{PREFIX}/ft_sensor_wrench", convert.wrench_stamped_msg(wrench, t, "tool0"))

    def goal(self):
        from robot_rl.ros import convert

        sent = self.node.published.get(f"{PREFIX}/target_frame", [])
        assert sent, "the backend published no target"
        return convert.pose_from_msg(sent[-1])

    def rejected_postures(self) -> int:
        return 0  # no posture channel: set_posture raises NotImplementedError

    def posture_marker(self):
        return None

    def stop_itself(self) -> None:
        self.saturated = True
        self.send_state()

    def allow_recovery(self) -> None:
        self.saturated = False
