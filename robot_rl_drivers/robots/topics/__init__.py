"""Another controller node's arm (``robot.backend: topics``): the actor reads its state and
sends targets over the robot-plane topics (:class:`robot_rl.nodes.topic_robot`); robot_rl
starts no controller node for it."""

from __future__ import annotations

from robot_rl_drivers.spec import RobotSpec

SPEC = RobotSpec(name="topics", folder="topics", node="",
                 doc="a topics arm is another controller node's, read by the actor node over topics")
