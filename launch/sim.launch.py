"""The sim graph with the scripted expert: ``ros2 launch robot_rl sim.launch.py [config:=peg_insert]``.

sim_node (MuJoCo, on the same topics as a real robot) and actor_node driving it with
the task's scripted expert (``ros.policy``'s default, as under ``robot-rl launch``), until
Ctrl-C (``set:='ros.episodes=3'`` stops after three episodes).
"""

from robot_rl.nodes.ros_launch import generate_launch_description as session


def generate_launch_description():
    return session(config="pick_cube")
