"""robot_rl's ROS 2 nodes, one thin file each; their logic lives in :mod:`robot_rl.graph`.

* ``camera_node``: a camera backend -> ``/camera/<name>/color/image_raw`` + ``camera_info``;
* ``controller_node``: a real arm's Robot backend; robot state out, targets in, watchdog;
* ``intervention_node``: SpaceMouse / keyboard -> ``/spacenav/twist`` + ``/spacenav/joy``;
* ``actor_node``: RobotEnv over topics + policy + interventions + episode bookkeeping;
* ``sim_node``: one MuJoCo world in real time, on the same topics as a real robot.

Each runs under rclpy or robot_rl's DDS backend (:mod:`robot_rl.ros`): ``ros2 run
robot_rl <node>``, ``python -m robot_rl.nodes.<node>``, ``ros2 launch robot_rl
session.launch.py config:=...`` or ``robot-rl launch <config>``.
"""
