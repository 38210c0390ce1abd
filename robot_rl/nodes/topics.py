"""Every topic of a training session's node graph, by the key its nodes' parameters use.

Nodes take their topic names as parameters ``topics.<key>`` (cameras:
``topics.cameras.<name>.image`` / ``.info``), all required, so the graph description
(:mod:`robot_rl.nodes.description`) is the one place that decides them. The defaults
here are the standard drivers' names (DESIGN.md, "Two planes, two transports"), so our
nodes and theirs are interchangeable.

Robot plane (real hardware and sim alike), topic: type (publisher):

* ``/camera/<name>/color/image_raw``: ``sensor_msgs/Image`` rgb8 (camera node / sim node)
* ``/camera/<name>/color/camera_info``: ``sensor_msgs/CameraInfo`` (camera node / sim node)
* ``/joint_states``: ``sensor_msgs/JointState``, arm joints + ``gripper`` (controller / sim node)
* ``/robot/tcp_pose``, ``/robot/tcp_twist``, ``/robot/tcp_wrench``: ``geometry_msgs/PoseStamped``,
  ``TwistStamped``, ``WrenchStamped`` (controller / sim node)
* ``/robot/target_pose``: ``geometry_msgs/PoseStamped`` (actor -> controller)
* ``/robot/gripper/command``: ``std_msgs/Float64``, 0 closed .. 1 open (actor -> controller)
* ``/robot/posture``: ``sensor_msgs/JointState`` (actor -> controller), the null-space
  posture of a joint reset (:meth:`robot_rl.interfaces.Robot.set_posture`): ``position``
  the 7 arm joint angles, ``effort`` the null-space stiffness in Nm/rad, the same for
  every joint (empty: the controller's configured one); an empty ``position`` restores
  the configured posture. The controller's watchdog hold restores it too.
* ``/spacenav/twist``, ``/spacenav/joy``: ``geometry_msgs/Twist``, ``sensor_msgs/Joy``
  (intervention node, or spacenav_node; the contract is in :mod:`robot_rl.nodes.intervention`)

Sim only (the sim node; a real robot has none of these):

* ``/sim/reset`` (``std_msgs/String``, JSON ``{"id": "<actor>:<n>", "seed": <int>}``):
  the actor asks for a new episode. The sim resets its task with
  ``numpy.random.default_rng(seed)`` (the sim shortcut, or the scripted reset the
  config asks for) and answers. A repeated id is answered again without a new reset,
  so the actor may re-send a request until it is answered.
* ``/sim/reset_done`` (``std_msgs/String``, JSON ``{"id": ..., "seed": ..., "stamp":
  <wall time s when the reset finished>, "gripper": <start opening>, "resets": <n>}``).
  Messages on other topics stamped before ``stamp`` describe the previous episode.
* ``/sim/task_state`` (``sensor_msgs/JointState``): ground truth at the state rate:
  ``name`` = ``task_state.0 .. task_state.<n-1>, success``; ``position`` holds the
  task's privileged state vector then 1.0/0.0 for success; the header stamp is the same
  wall time as the robot state published in the same tick.
* ``/sim/success`` (``std_msgs/Bool``): the same success flag, for people and tools.

Every node also publishes ``/<node name>/status`` (``std_msgs/String``, one JSON
object) at ``ros.status_hz`` and on events (the watchdog's hold, a fault): messages
received and dropped per topic (a malformed message is dropped, warned about and
counted), and the node's own figures.
"""

from __future__ import annotations

ROBOT_STATE = {
    "joint_states": "/joint_states",
    "tcp_pose": "/robot/tcp_pose",
    "tcp_twist": "/robot/tcp_twist",
    "tcp_wrench": "/robot/tcp_wrench",
}
ROBOT_COMMANDS = {
    "target_pose": "/robot/target_pose",
    "gripper_command": "/robot/gripper/command",
    "posture": "/robot/posture",
}
INPUT = {
    "spacenav_twist": "/spacenav/twist",
    "spacenav_joy": "/spacenav/joy",
}
SIM = {
    "sim_reset": "/sim/reset",
    "sim_reset_done": "/sim/reset_done",
    "sim_task_state": "/sim/task_state",
    "sim_success": "/sim/success",
}
STATUS = "~/status"
SUCCESS_ENTRY = "success"  # last name in /sim/task_state


def camera_topics(name: str) -> dict[str, str]:
    """``{"image": ..., "info": ...}`` for camera ``name`` (realsense2_camera's names)."""
    return {"image": f"/camera/{name}/color/image_raw", "info": f"/camera/{name}/color/camera_info"}


def camera_frame_id(name: str) -> str:
    return f"{name}_color_optical_frame"


def task_state_names(state_dim: int) -> list[str]:
    """The ``name`` field of ``/sim/task_state`` for a task with ``state_dim`` entries."""
    return [f"task_state.{i}" for i in range(state_dim)] + [SUCCESS_ENTRY]


def topic_parameters(keys: list[str], cameras: list[str] = (), camera_parts: tuple[str, ...] = ("image",)
                     ) -> dict[str, object]:
    """The nested ``topics:`` parameter mapping a node needs, with the standard names."""
    table = {**ROBOT_STATE, **ROBOT_COMMANDS, **INPUT, **SIM}
    out: dict[str, object] = {key: table[key] for key in keys}
    if cameras:
        out["cameras"] = {name: {part: camera_topics(name)[part] for part in camera_parts} for name in cameras}
    return out
