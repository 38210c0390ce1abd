"""Every topic of a training session's node graph, by the key its nodes' parameters use.

Nodes take their topic names as parameters ``topics.<key>`` (cameras:
``topics.cameras.<name>.image`` / ``.info``), all required, so the graph description
(:mod:`robot_rl.nodes.description`) is the one place that decides them. The defaults
here are the standard drivers' names (DESIGN.md, "Two planes, two transports"), so our
nodes and theirs are interchangeable.

The defaults are RELATIVE names (``joint_states``, ``robot/tcp_pose``, ...): they
resolve in the session's namespace (``ros.namespace``, the ``namespace`` launch
argument), so a session in ``r1`` uses ``/r1/joint_states`` and two robots share one
DDS domain without hearing each other. With no namespace (the default) they resolve
to the absolute names listed here. ``/diagnostics`` stays absolute (ROS tools read it
there; each status is named by the node's fully-qualified name), and ``/clock`` is
remapped to ``/<ns>/clock`` on every node of a namespaced session (see
:mod:`robot_rl.nodes.description`).

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
  <simulated time s when the reset finished>, "gripper": <start opening>, "resets": <n>}``).
  Messages on other topics stamped before ``stamp`` describe the previous episode.
* ``/sim/task_state`` (``sensor_msgs/JointState``): ground truth at the state rate:
  ``name`` = ``task_state.0 .. task_state.<n-1>, success``; ``position`` holds the
  task's privileged state vector then 1.0/0.0 for success; the header stamp is the same
  simulated time as the robot state published in the same tick.
* ``/clock`` (``rosgraph_msgs/Clock``): the simulated time, monotonic across resets, at
  every state tick; every node of a sim session runs with ``use_sim_time`` and every
  header stamp of the session is on it (:mod:`robot_rl.nodes.sim_node`).

tf (:mod:`robot_rl.nodes.frames`): ``tf`` and ``tf_static`` (``tf2_msgs/TFMessage``,
relative names) from the controller node or the sim node: base -> TCP, and the cameras'
optical frames.
* ``/sim/success`` (``std_msgs/Bool``): the same success flag, for people and tools.

Every node also publishes ``/<node name>/status`` (``std_msgs/String``, one JSON
object; ``/<ns>/<node name>/status`` in a namespace) at ``ros.status_hz`` and on events
(the watchdog's hold, a fault): messages received and dropped per topic (a malformed
message is dropped, warned about and counted), and the node's own figures; and the same
on ``/diagnostics`` (``diagnostic_msgs/DiagnosticArray``, :mod:`robot_rl.nodes.diagnostics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from robot_rl.config.ros import (
    CLOCK_TOPIC,
    DIAGNOSTICS_TOPIC,
    INPUT_TOPICS,
    ROBOT_COMMAND_TOPICS,
    ROBOT_STATE_TOPICS,
    SIM_TOPICS,
    TF_STATIC_TOPIC,
    TF_TOPIC,
    camera_topic_names,
)

if TYPE_CHECKING:
    from robot_rl.config import Config

# The tables live with the config that renames them (robot_rl.config.ros checks at load that no two
# resolve to one name); here under the names the nodes use.
ROBOT_STATE = ROBOT_STATE_TOPICS
ROBOT_COMMANDS = ROBOT_COMMAND_TOPICS
INPUT = INPUT_TOPICS
SIM = SIM_TOPICS
STATUS = "~/status"
# the standard topics robot_rl's nodes publish besides their topics.* ones
TF, TF_STATIC = TF_TOPIC, TF_STATIC_TOPIC  # relative: a namespaced session has its own tree
DIAGNOSTICS = DIAGNOSTICS_TOPIC  # absolute: the aggregator reads the one topic; statuses carry full node names
CLOCK = CLOCK_TOPIC  # absolute, as rclpy's TimeSource reads it; a namespaced session remaps it per session
SUCCESS_ENTRY = "success"  # last name in /sim/task_state


def camera_topics(name: str) -> dict[str, str]:
    """``{"image": ..., "info": ...}`` for camera ``name`` (realsense2_camera's names)."""
    return camera_topic_names(name)


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


def remap_topics(topics: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A node's ``topics:`` parameters with ``names`` (the config's ``ros.topics``, by key of
    :data:`ROBOT_STATE`, :data:`ROBOT_COMMANDS` and :data:`INPUT`) in place of the defaults."""
    return {key: names.get(key, value) for key, value in topics.items()}


def configured_cameras(cfg: Config) -> list[str]:
    """The cameras the configured env observes."""
    return list(cfg.env.cameras) if cfg.env.obs_mode != "state" else []


def actor_cameras(cfg: Config) -> list[str]:
    """The cameras whose topics the actor reads: the observed ones, and the reward classifier's (or recorder's).

    Here, not in :mod:`robot_rl.nodes.actor`, because the graph description needs it and must import no more
    than numpy and PyYAML: ``ros2 launch`` runs it in the ``ros2`` command's Python.
    """
    names = configured_cameras(cfg)
    if cfg.reward.classifier_path is not None or cfg.ros.reward_frames_dir is not None:
        names += [c for c in cfg.reward.cameras if c not in names]
    return names
