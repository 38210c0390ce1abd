"""A training session as a ROS 2 node graph: thin nodes, and their logic beside them.

Each ``*_node.py`` is thin: it declares parameters and turns messages into core values
and back. Its logic lives in a plain module beside it, which plain tests reach without
ROS. Only the ``*_node.py`` files and :mod:`~robot_rl.nodes.common` import
:mod:`robot_rl.ros`; importing any other module here imports neither rclpy nor
cyclonedds (nor MuJoCo).

* ``controller_node`` + :mod:`~robot_rl.nodes.controller`: a real arm's Robot backend;
  robot state out, targets in; the rules (no motion before the pose is known, the
  target watchdog, faults) shared with the sim node;
* ``camera_node`` + :mod:`~robot_rl.nodes.camera`: a camera backend ->
  ``/camera/<name>/color/image_raw`` + ``camera_info``; ``TopicCamera`` on the far side;
* ``intervention_node`` + :mod:`~robot_rl.nodes.intervention`: SpaceMouse / keyboard ->
  ``/spacenav/twist`` + ``/spacenav/joy``, and ``TopicInput`` reading them back;
* ``actor_node`` + :mod:`~robot_rl.nodes.actor`: RobotEnv over topics (the backends
  :mod:`~robot_rl.nodes.robot`, :mod:`~robot_rl.nodes.camera`, :mod:`~robot_rl.nodes.task`),
  a policy, interventions and episode bookkeeping;
* ``sim_node`` + :mod:`~robot_rl.nodes.sim`: one MuJoCo world in real time, on the same
  topics as a real robot;
* ``recorder_node`` + :mod:`~robot_rl.nodes.recorder`: with ``ros.record.enabled``, the
  session's topics into a rosbag2 MCAP bag (:mod:`robot_rl.ros.bag`);
* :mod:`~robot_rl.nodes.topics`: every topic and message type of the graph;
  :mod:`~robot_rl.nodes.latest`: the newest value of a stream, shared with a loop;
  :mod:`~robot_rl.nodes.diagnostics`: a node's status as its ``/diagnostics`` entry;
* :mod:`~robot_rl.nodes.description`, :mod:`~robot_rl.nodes.launcher` and
  :mod:`~robot_rl.nodes.ros_launch`: the session graph built from one YAML, run as
  processes by ``robot-rl launch`` or by ``ros2 launch robot_rl session.launch.py``.

Each node runs under rclpy or robot_rl's DDS backend (:mod:`robot_rl.ros`): ``ros2 run
robot_rl <node>``, ``python -m robot_rl.nodes.<node>``, ``ros2 launch robot_rl
session.launch.py config:=...`` or ``robot-rl launch <config>``.
"""
