"""A training session's node graph from one config: ``ros2 launch robot_rl session.launch.py config:=<yaml>``.

The same nodes ``robot-rl launch <yaml>`` starts (robot_rl.nodes.description): the sim
graph for ``robot.backend: sim``, the controller and camera nodes for a real arm, plus
the intervention node and the actor. ``set:='ros.policy=expert;ros.episodes=3'``
overrides config values.
"""

from robot_rl.nodes.ros_launch import generate_launch_description as session


def generate_launch_description():
    return session()
