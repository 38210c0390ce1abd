"""Typed config for the node graph: the ``ros:`` section of a session YAML.

It says how the nodes of a training session behave when they run as a ROS 2 graph
(``ros2 launch robot_rl ...`` or ``robot-rl launch ...``, see :mod:`robot_rl.nodes`):
where the actor's actions come from (``policy: human`` with ``demos_dir`` records a
person's demonstrations on a robot; with ``reward_frames_dir``, frames for the reward
classifier labelled by the person's keys), the controller's state rate and watchdog, and how
long the actor waits for the other nodes. The in-process sim env (``robot-rl train``,
``rollout``) ignores this section.

Two watchdogs, on purpose: ``robot.controller.watchdog_s`` is the backend's own, inside
its control loop (the 1 kHz torque loop, the in-process sim); ``ros.watchdog_s`` is the
controller node's, on the target *messages*. The actor re-sends its latest target at
``target_hz`` between its 10 Hz steps, so the node's watchdog can be short (0.1 s) and
still never fires while the actor is alive; when the actor dies, the arm holds within
about ``watchdog_s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from robot_rl.config.loader import param, source_around
from robot_rl.errors import ConfigError

# robot_rl's topic names, by the key of the nodes' ``topics.<key>`` parameters (robot_rl.nodes.topics
# describes each, and re-exports these tables). RELATIVE: they resolve in the session's namespace.
ROBOT_STATE_TOPICS = {
    "joint_states": "joint_states",
    "tcp_pose": "robot/tcp_pose",
    "tcp_twist": "robot/tcp_twist",
    "tcp_wrench": "robot/tcp_wrench",
}
ROBOT_COMMAND_TOPICS = {
    "target_pose": "robot/target_pose",
    "gripper_command": "robot/gripper/command",
    "posture": "robot/posture",
}
INPUT_TOPICS = {
    "spacenav_twist": "spacenav/twist",
    "spacenav_joy": "spacenav/joy",
}
SIM_TOPICS = {
    "sim_reset": "sim/reset",
    "sim_reset_done": "sim/reset_done",
    "sim_task_state": "sim/task_state",
    "sim_success": "sim/success",
}
TF_TOPIC, TF_STATIC_TOPIC = "tf", "tf_static"  # relative: a namespaced session has its own tree
DIAGNOSTICS_TOPIC = "/diagnostics"  # absolute: the aggregator reads the one topic
CLOCK_TOPIC = "/clock"  # absolute, as rclpy's TimeSource reads it; a namespaced session remaps it per session


def camera_topic_names(name: str) -> dict[str, str]:
    """``{"image": ..., "info": ...}`` for camera ``name`` (realsense2_camera's names)."""
    return {"image": f"camera/{name}/color/image_raw", "info": f"camera/{name}/color/camera_info"}

# ros.topics: the robot-state, command and input topics under other names --------------------
# (remaps applied by robot_rl.nodes.description to every node's topics.* parameters; camera
# topics come from the camera's config, cameras.<name>.backend: topic)

_TOPIC_TOKEN = r"[A-Za-z_][A-Za-z0-9_]*"
_TOPIC_NAME = re.compile(rf"/?{_TOPIC_TOKEN}(/{_TOPIC_TOKEN})*")
TOPIC_NAME_MAX_CHARS = 250


def check_topic_name(name: str, key: str) -> str:
    """``name`` if it is a ROS 2 topic name, absolute (``/franka/tcp_pose``) or relative
    (``franka/tcp_pose``, resolved under the session namespace); ValueError naming ``key`` if not.

    rcl's rule: tokens of letters, digits and ``_``, not starting with a digit, separated
    by single ``/``, no trailing ``/`` (private ``~`` names and substitutions are refused).
    """
    shown = name if len(name) <= 60 else name[:57] + "..."
    if len(name) > TOPIC_NAME_MAX_CHARS or not _TOPIC_NAME.fullmatch(name):
        raise ValueError(f"{key} {shown!r} is not a ROS topic name: use tokens of letters, digits and '_' (not "
                         "starting with a digit) separated by single '/', e.g. /franka/tcp_pose")
    return name


@dataclass
class RosTopicsConfig:
    """``ros.topics``: robot_rl's topics under the names another driver uses; null keeps robot_rl's
    default (robot_rl.nodes.topics). Every node of the graph gets the same names."""

    joint_states: Optional[str] = param(None, doc="sensor_msgs/JointState of the arm (default joint_states)")
    tcp_pose: Optional[str] = param(None, doc="geometry_msgs/PoseStamped of the TCP (default robot/tcp_pose)")
    tcp_twist: Optional[str] = param(None, doc="geometry_msgs/TwistStamped (default robot/tcp_twist)")
    tcp_wrench: Optional[str] = param(None, doc="geometry_msgs/WrenchStamped (default robot/tcp_wrench)")
    target_pose: Optional[str] = param(None, doc="geometry_msgs/PoseStamped target (default robot/target_pose)")
    gripper_command: Optional[str] = param(None, doc="std_msgs/Float64 (default robot/gripper/command)")
    posture: Optional[str] = param(None, doc="sensor_msgs/JointState null-space posture (default robot/posture)")
    spacenav_twist: Optional[str] = param(None, doc="geometry_msgs/Twist of the SpaceMouse (default spacenav/twist)")
    spacenav_joy: Optional[str] = param(None, doc="sensor_msgs/Joy of the SpaceMouse (default spacenav/joy)")

    def __post_init__(self) -> None:
        for key, name in self.remaps().items():
            check_topic_name(name, f"ros.topics.{key}")

    def remaps(self) -> dict[str, str]:
        """``{key: name}`` for the topics the config renames."""
        return {key: name for key, name in vars(self).items() if name is not None}


def resolve_topic(name: str, namespace: str) -> str:
    """The name a node in ``namespace`` ("" or ``/r1``) uses for topic ``name``, as rcl resolves it:
    an absolute name as it is, a relative one under the namespace."""
    return name if name.startswith("/") else f"{namespace}/{name}"


def session_topics(cfg: Any) -> list[tuple[str, str, str]]:
    """Every topic of the session's graph as ``(what names it, its role, the resolved name)``.

    Roles: ``state`` (the arm's, published by the controller or sim node), ``command``
    (actor -> controller), ``input``, ``sim``, ``camera`` and ``standard`` (tf, /diagnostics,
    /clock). ``cfg.cameras`` must hold typed hardware settings (after ``check_hardware``).
    """
    ns = cfg.ros.namespace
    remaps = cfg.ros.topics.remaps()
    out: list[tuple[str, str, str]] = []
    tables = [(ROBOT_STATE_TOPICS, "state"), (ROBOT_COMMAND_TOPICS, "command"), (INPUT_TOPICS, "input")]
    for table, role in tables:
        for key, default in table.items():
            key_name = f"ros.topics.{key}"
            what = f"{key_name} {remaps[key]!r}" if key in remaps else f"{key_name} (default {default!r})"
            out.append((what, role, resolve_topic(remaps.get(key, default), ns)))
    if cfg.robot.backend == "sim":
        out += [(f"the sim's {key} topic", "sim", resolve_topic(name, ns)) for key, name in SIM_TOPICS.items()]
    for name, cam in cfg.cameras.items():
        settings = cam.hardware
        if hasattr(settings, "subscribed_topic"):  # a camera the actor reads from another driver's topic
            out.append((f"cameras.{name}.hardware.topic {settings.topic!r}", "camera",
                        resolve_topic(settings.subscribed_topic, ns)))
        else:
            out += [(f"camera {name}'s {part} topic", "camera", resolve_topic(topic, ns))
                    for part, topic in camera_topic_names(name).items()]
    out += [(f"the {topic} topic", "standard", resolve_topic(topic, ns)) for topic in (TF_TOPIC, TF_STATIC_TOPIC)]
    out += [(f"the {DIAGNOSTICS_TOPIC} topic", "standard", DIAGNOSTICS_TOPIC),
            (f"the {CLOCK_TOPIC} topic", "standard", f"{ns}{CLOCK_TOPIC}")]
    return out


def check_topic_aliasing(cfg: Any, file: str = "<config>") -> None:
    """Refuse a session in which two of its topics resolve to one name; a ConfigError naming both.

    Why: on one name, a state topic and a command topic (``ros.topics.joint_states:
    /robot/target_pose``) would have the controller read its own output as its input,
    two state topics would carry two message types (DDS refuses the second, or a node
    drops every message of the other), and a camera on a robot topic reads no image.
    Names are compared as the nodes resolve them: under ``ros.namespace`` unless absolute,
    with the ``ros.topics`` renames applied; ``/clock`` moves into the namespace as the
    graph remaps it.
    """
    seen: dict[str, tuple[str, str]] = {}
    for what, role, name in session_topics(cfg):
        if name not in seen:
            seen[name] = (what, role)
            continue
        first, first_role = seen[name]
        roles = {first_role, role}
        why = ("a robot-state topic on a command topic: the arm's state and the commands that move it would "
               "share one topic" if roles == {"state", "command"} else "two topics of the session on one name")
        raise ConfigError(f"{source_around(file, '')}: {first} and {what} both resolve to {name}: {why}; give "
                          "each its own name")


# ros.record: rosbag2 MCAP recording of the session (robot_rl.nodes.recorder, robot_rl.ros.bag) --------


@dataclass
class RosRecordConfig:
    """``ros.record``: record the session's robot-plane topics into a rosbag2 MCAP bag (a recorder node)."""

    enabled: bool = param(False, doc="start recorder_node with the session")
    dir: str = param("bags", doc="each session writes a new bag folder <dir>/session_<date>_<time> (a relative "
                                 "path is taken from where the session starts)")
    topics: list[str] = param(default_factory=list,
                              doc="record only these of the session's topics (as robot-rl launch --dry-run lists "
                                  "them, e.g. joint_states, sim_node/status); empty: all of them")
    flush_s: float = param(1.0, min=0.05, max=60.0,
                           doc="write and fsync the chunk in progress this often: a crash loses at most this much")
    chunk_kib: int = param(1024, min=16, max=65536, doc="also write a chunk when it holds this many KiB")
    compression: Literal["zstd", "lz4", "none"] = param("zstd", doc="chunk compression inside the MCAP file")

    def __post_init__(self) -> None:
        if not self.dir.strip():
            raise ValueError("ros.record.dir must not be empty")
        for i, name in enumerate(self.topics):
            check_topic_name(name, f"ros.record.topics[{i}]")


@dataclass
class RosConfig:
    """The node graph: the actor's policy and episodes, rates, timeouts, which nodes run."""

    # expert by default: a session started with no settings (robot-rl launch pick_cube, ros2 launch
    # robot_rl sim.launch.py) shows the task done, with no learner to start first; a real cell's
    # config names learner (a real-only task has no scripted expert, and says so at start)
    policy: Literal["learner", "checkpoint", "expert", "random", "human"] = param(
        "expert", doc="actor: the scripted expert (sim; the default), weights from robot-rl learner over gRPC, "
                      "a checkpoint, uniform random actions, or human: the arm holds still and only the "
                      "person's intervention.device moves it (demo recording)")
    checkpoint: Optional[str] = param(None, doc="policy: checkpoint: a robot-rl train or robot-rl learner run "
                                                "directory (it holds checkpoint/state.npz)")
    demos_dir: Optional[str] = param(None, doc="actor: write each finished episode into this demo directory "
                                               "as it ends (appending; not with policy learner)")
    demos_keep_failed: bool = param(False, doc="actor: with demos_dir, keep failed episodes too "
                                               "(default: successful ones only)")
    reward_frames_dir: Optional[str] = param(
        None, doc="actor: record reward-classifier frames into this frame directory (appending), labelled by "
                  "the person's keys: success/failure set the label, pause skips frames, stop ends the session "
                  "(needs a spacemouse or keyboard intervention.device; not with policy learner or demos_dir)")
    episodes: int = param(0, min=0, max=10**9, doc="actor: stop after this many episodes (0: run until stopped)")
    video: Optional[str] = param(None, doc="sim node: film every episode from the scene's cameras into this MP4 "
                                           "(robot-rl eval --graph sets it to <out>/eval.mp4)")
    seed: Optional[int] = param(None, min=0, max=2**32 - 1,
                                doc="actor: env and exploration seed; null: the session's seed")
    state_hz: float = param(125.0, min=100.0, max=1000.0,
                            doc="controller / sim: rate of /joint_states and /robot/tcp_* (and sim ground truth)")
    watchdog_s: float = param(0.1, min=0.02, max=2.0,
                              doc="controller / sim: hold the measured pose when no target arrived for this long")
    target_hz: float = param(50.0, min=2.0, max=1000.0,
                             doc="actor: re-send the latest target this often, between steps")
    state_timeout_s: float = param(0.5, min=0.05, max=10.0,
                                   doc="actor: a robot state older than this is a fault (controller gone)")
    image_timeout_s: float = param(1.0, min=0.05, max=30.0, doc="actor: an image older than this is an error")
    input_timeout_s: float = param(1.0, min=0.05, max=30.0,
                                   doc="actor: a /spacenav/twist older than this reads as zero (publisher gone)")
    startup_timeout_s: float = param(60.0, min=1.0, max=600.0,
                                     doc="actor: wait this long for the first robot state, images and the sim")
    reset_timeout_s: float = param(60.0, min=1.0, max=600.0, doc="actor: wait this long for a sim reset")
    input_hz: float = param(100.0, min=10.0, max=1000.0, doc="intervention node: publish rate")
    status_hz: float = param(1.0, min=0.1, max=50.0, doc="every node: rate of its ~/status message")
    input_node: bool = param(True, doc="start robot_rl's intervention node for a spacemouse/keyboard device; "
                                       "false when another node (e.g. spacenav_node) publishes /spacenav/*")
    frame_id: str = param("base", doc="frame of the published TCP pose, twist, wrench and targets")
    # tf (robot_rl.nodes.frames): the controller or sim node publishes frame_id -> tcp_frame_id
    tcp_frame_id: str = param("tcp", doc="tf frame of the TCP: the child of frame_id on tf, the parent of "
                                         "cameras mounted on the hand")
    # the session's ROS namespace (robot_rl.nodes.topics): every node runs in it, relative topic names
    # resolve under it; the `namespace` launch argument of ros2 launch overrides it
    namespace: str = param("", doc="every node's ROS namespace, e.g. r1 (topics /r1/joint_states, ...): two "
                                   "sessions on one DDS domain need different ones; empty: the root namespace")
    # remappable topic names (RosTopicsConfig above)
    topics: RosTopicsConfig = field(default_factory=RosTopicsConfig)
    # rosbag2 MCAP recording of the session (RosRecordConfig above)
    record: RosRecordConfig = field(default_factory=RosRecordConfig)

    def __post_init__(self) -> None:
        self.namespace = normalize_namespace(self.namespace)
        if self.watchdog_s <= 2.0 / self.target_hz:
            raise ValueError(f"ros.watchdog_s {self.watchdog_s} must exceed two target periods "
                             f"(2 / ros.target_hz = {2.0 / self.target_hz:.3f} s), or a live actor trips it")
        for key in ("frame_id", "tcp_frame_id"):  # tf2 refuses a frame id with a leading '/'
            value = getattr(self, key)
            if not value or value.startswith("/") or any(c.isspace() for c in value):
                raise ValueError(f"ros.{key} {value!r} is not a tf frame id (not empty, no leading '/', no spaces)")
        if self.tcp_frame_id == self.frame_id:
            raise ValueError(f"ros.tcp_frame_id and ros.frame_id are both {self.frame_id!r}: tf needs two frames")
        if self.video is not None and not self.video.strip().lower().endswith(".mp4"):
            raise ValueError(f"ros.video {self.video!r} must name an .mp4 file (the sim node writes MP4)")
        if self.demos_dir is not None and self.policy == "learner":
            raise ValueError("ros.demos_dir is written by an actor acting on its own (ros.policy human, expert, "
                             "checkpoint or random); with policy learner, interventions go to the learner's "
                             "demo buffer")
        if self.reward_frames_dir is not None and self.policy == "learner":
            raise ValueError("ros.reward_frames_dir is written by an actor acting on its own (ros.policy human, "
                             "expert, checkpoint or random): while it records, the success/failure keys label "
                             "frames instead of ending episodes, which a learning session needs")
        if self.reward_frames_dir is not None and self.demos_dir is not None:
            raise ValueError("ros.reward_frames_dir and ros.demos_dir: record reward frames and demos in separate "
                             "sessions (while frames are recorded, the success/failure keys label frames and do "
                             "not end episodes)")


_NAMESPACE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAMESPACE_MAX_CHARS = 200


def normalize_namespace(namespace: str) -> str:
    """``""`` (the root namespace) or ``/a/b``, from ``a/b``, ``/a/b`` or ``/a/b/``; ValueError if not a ROS one.

    The rule is rcl's: tokens of letters, digits and ``_``, not starting with a digit,
    separated by single ``/`` (no ``~``, no substitutions, no empty token).
    """
    text = namespace.strip()
    if text in ("", "/"):
        return ""
    body = text[1:] if text.startswith("/") else text
    body = body[:-1] if body.endswith("/") else body
    shown = namespace if len(namespace) <= 60 else namespace[:57] + "..."
    if len(body) > NAMESPACE_MAX_CHARS:
        raise ValueError(f"ros.namespace {shown!r} is longer than {NAMESPACE_MAX_CHARS} characters")
    bad = next((t for t in body.split("/") if not _NAMESPACE_TOKEN.fullmatch(t)), None)
    if bad is not None:
        why = "an empty token ('//')" if bad == "" else f"the token {bad!r}"
        raise ValueError(f"ros.namespace {shown!r} is not a ROS namespace ({why}): use tokens of letters, "
                         "digits and '_' (not starting with a digit) separated by '/', e.g. r1 or lab/r1")
    return "/" + body
