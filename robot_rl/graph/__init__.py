"""A training session as a ROS 2 node graph: the node logic, without ROS.

The nodes in :mod:`robot_rl.nodes` are thin: they declare parameters, turn messages
into core values and back, and call into this package, which plain tests reach:

* :mod:`~robot_rl.graph.topics`: every topic and message type of the graph, including
  the sim-only reset and ground-truth topics, and each node's status topic;
* :mod:`~robot_rl.graph.robot`, :mod:`~robot_rl.graph.camera`,
  :mod:`~robot_rl.graph.task`, :mod:`~robot_rl.graph.joy`: the actor's env backends
  over topics (``TopicRobot``, ``TopicCamera``, ``WallClock``, ``SimTopicTask``,
  ``TopicInput``), so ``RobotEnv`` runs on topics exactly as on MuJoCo;
* :mod:`~robot_rl.graph.actor`: the actor node's episodes, policy and bookkeeping;
* :mod:`~robot_rl.graph.controller`: the controller rules (no motion before the pose is
  known, the target watchdog, faults) shared by the controller and sim nodes;
* :mod:`~robot_rl.graph.sim_server`: the real-time MuJoCo world behind the sim node;
* :mod:`~robot_rl.graph.description` and :mod:`~robot_rl.graph.launcher`: the session
  graph built from one YAML, and ``robot-rl launch``, which runs it as processes.

Importing this package imports neither rclpy nor cyclonedds (nor MuJoCo).
"""
