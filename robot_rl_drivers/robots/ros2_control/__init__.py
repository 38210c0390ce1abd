"""Any arm whose Cartesian controller runs in ros2_control: ``robot.backend: ros2_control``.

robot_rl publishes the target pose and reads the state the controller side publishes, in
one of the topic contracts of :mod:`.settings` (CRISP's, FZI's cartesian_controllers');
the robot is :mod:`.robot`.
"""

from __future__ import annotations

from robot_rl_drivers.robots.ros2_control.settings import Ros2ControlSettings
from robot_rl_drivers.spec import RobotSpec

SPEC = RobotSpec(name="ros2_control", folder="ros2_control", settings=Ros2ControlSettings,
                 factory="robot_rl_drivers.robots.ros2_control.robot:make")
