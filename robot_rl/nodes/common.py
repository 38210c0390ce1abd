"""What every robot_rl node does the same way: config, topic parameters, QoS, status, state.

* ``config`` (string, required): the session YAML (a path, or a name such as
  ``pick_cube`` looked up in the package's configs); the node loads it with the strict
  loader, so a bad file is one error line naming the file and key.
* ``topics.<key>`` (strings, required): every topic the node uses, see
  :mod:`robot_rl.nodes.topics`; relative names resolve in the node's namespace (the
  session's ``ros.namespace``). A missing one is one error line naming the parameter.
* ``~/status`` (``std_msgs/String``, JSON): messages received and dropped per topic
  (malformed messages are dropped, warned about and counted) plus the node's figures,
  at ``ros.status_hz`` and whenever something happens (:meth:`StatusPublisher.publish`);
  the same as a ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics``, with an
  OK/WARN/ERROR level (:mod:`robot_rl.nodes.diagnostics`).

QoS: images are published reliable, keep-last 1, and read best-effort (the sensor
profile, DESIGN.md); the other streams a node only wants the newest of (robot state,
ground truth) are published reliable keep-last 10 and read best-effort keep-last 1;
commands and events (targets, gripper, reset, joystick) are reliable keep-last 10.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from robot_rl import jsonio
from robot_rl.config import Config
from robot_rl.errors import RobotRLError
from robot_rl.interfaces import RobotState
from robot_rl.nodes.topics import DIAGNOSTICS, TF, TF_STATIC
from robot_rl.paths import resolve_config
from robot_rl.ros import convert, msgs
from robot_rl.ros.errors import MessageError, ParameterError
from robot_rl.tasks import load_config

# --- the backend ---------------------------------------------------------------------------


def node_base() -> type:
    """``robot_rl.ros.Node``, for a node class to subclass at import time.

    Subclassing picks the backend when the node's module is imported, before ``main()``
    could report anything; so a bad ``ROBOT_RL_ROS_BACKEND`` (or rclpy forced but
    missing) ends the program here, with the same one error line as every other setup
    mistake and exit status 2.
    """
    from robot_rl.ros.errors import BackendError

    try:
        from robot_rl.ros import Node
    except BackendError as err:
        print(f"robot-rl: {err}".splitlines()[0], file=sys.stderr)
        raise SystemExit(err.exit_code) from None
    return Node


# --- QoS ---------------------------------------------------------------------------------


def qos(kind: str) -> Any:
    """``image_pub``, ``latest_sub`` (best-effort, newest only), ``stream_pub``, ``event``, and the standard
    topics' own: ``clock`` (rclcpp's ClockQoS: best-effort, keep-last 1), ``tf`` (tf2's broadcaster:
    reliable, keep-last 100) and ``tf_static`` (tf2's static broadcaster: reliable, transient-local,
    keep-last 1, so a subscriber that joins later gets it)."""
    from robot_rl import ros

    if kind == "image_pub":
        return ros.QoSProfile(depth=1, reliability=ros.ReliabilityPolicy.RELIABLE)
    if kind in ("latest_sub", "clock"):
        return ros.QoSProfile(depth=1, reliability=ros.ReliabilityPolicy.BEST_EFFORT)
    if kind in ("stream_pub", "event"):
        return ros.QoSProfile(depth=10, reliability=ros.ReliabilityPolicy.RELIABLE)
    if kind == "tf":
        return ros.QoSProfile(depth=100, reliability=ros.ReliabilityPolicy.RELIABLE)
    if kind == "tf_static":
        return ros.QoSProfile(depth=1, reliability=ros.ReliabilityPolicy.RELIABLE,
                              durability=ros.DurabilityPolicy.TRANSIENT_LOCAL)
    raise ValueError(f"unknown QoS kind {kind!r}")


# --- parameters --------------------------------------------------------------------------


def required_string(node: Any, name: str) -> str:
    """Declare a string parameter with no default and read it: unset or empty is one clear error."""
    from robot_rl.ros import Parameter

    node.declare_parameter(name, Parameter.Type.STRING)
    value = node.get_parameter(name).value
    if not value:
        raise ParameterError(f"node '{node.get_name()}': parameter '{name}' is empty")
    return value


def load_session(node: Any) -> tuple[Config, Path]:
    """Declare and read ``config``; load it (ConfigError names the file and key)."""
    path = resolve_config(required_string(node, "config"))
    return load_config(path), path


def declare_topics(node: Any, keys: Iterable[str], cameras: Iterable[str] = (), parts: Iterable[str] = (),
                   prefix: str = "topics") -> dict[str, Any]:
    """Declare ``topics.<key>`` (and ``topics.cameras.<name>.<part>``) as required strings; their values.

    Each value comes back expanded in the node's namespace (``joint_states`` in ``/r1`` is
    ``/r1/joint_states``; an absolute name stays itself; remaps still apply when the node
    subscribes), so logs, errors and status name the topic a user can ``ros2 topic echo``.
    """
    def topic(name: str) -> str:
        return node.resolve_topic_name(required_string(node, name), only_expand=True)

    out: dict[str, Any] = {key: topic(f"{prefix}.{key}") for key in keys}
    cams = {name: {part: topic(f"{prefix}.cameras.{name}.{part}") for part in parts} for name in cameras}
    if cams:
        out["cameras"] = cams
    return out


def subscribe_commands(node: Any, topics: dict[str, Any], core: Callable[[], Any]) -> None:
    """The robot-command topics (target pose, gripper, posture) into a ControllerCore.

    ``core`` returns the :class:`~robot_rl.nodes.controller.ControllerCore` (the
    controller node makes its robot last, so its core exists only then); the controller
    node and the sim node both take their commands this way.
    """
    node.create_subscription(msgs.PoseStamped, topics["target_pose"],
                             lambda m: core().on_target(*convert.pose_from_msg(m)), qos("event"))
    node.create_subscription(msgs.Float64, topics["gripper_command"],
                             lambda m: core().on_gripper(convert.gripper_command_from_msg(m)), qos("event"))
    node.create_subscription(msgs.JointState, topics["posture"],
                             lambda m: core().on_posture(*convert.posture_from_msg(m)), qos("event"))


def param_or(node: Any, name: str, default: Any) -> Any:
    """Declare an optional parameter with a default and read it."""
    node.declare_parameter(name, default)
    return node.get_parameter(name).value


# --- callbacks, logging, status -----------------------------------------------------------


def guarded(callback: Callable[[Any], None]) -> Callable[[Any], None]:
    """Turn a core ``ValueError`` about a message into a MessageError: dropped, warned, counted."""

    def on_message(msg: Any) -> None:
        try:
            callback(msg)
        except ValueError as err:
            raise MessageError(str(err)) from None

    return on_message


class _NodeFormatter(logging.Formatter):
    def __init__(self, node_name: str) -> None:
        super().__init__()
        self.node_name = node_name

    def format(self, record: logging.LogRecord) -> str:
        level = {"WARNING": "WARN", "CRITICAL": "FATAL"}.get(record.levelname, record.levelname)
        return f"[{level}] [{record.created:.9f}] [{self.node_name}]: {record.getMessage()}"


def log_core_to_console(node_name: str, level: int = logging.INFO) -> None:
    """Print the core's ``robot_rl.*`` log lines like the node's own (they have no handler otherwise)."""
    logger = logging.getLogger("robot_rl")
    if any(getattr(h, "_robot_rl_node", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_NodeFormatter(node_name))
    handler._robot_rl_node = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level)


class StatusPublisher:
    """``~/status`` and ``/diagnostics``: the node's counters plus ``extra()``, on a timer and on events.

    ``~/status`` carries the whole status as one JSON object (tools and tests read it);
    ``/diagnostics`` the same as one ``DiagnosticStatus`` named by the node's
    fully-qualified name, with a level (:mod:`robot_rl.nodes.diagnostics`) and
    ``hardware_id`` (what the node drives; empty for none).
    """

    def __init__(self, node: Any, extra: Callable[[], dict[str, Any]], hz: float, *, hardware_id: str = "") -> None:
        from robot_rl.nodes.diagnostics import DropWindow

        self.node = node
        self.extra = extra
        self.hardware_id = hardware_id
        self.pub = node.create_publisher(msgs.String, "~/status", qos("event"))
        self.diagnostics = node.create_publisher(msgs.DiagnosticArray, DIAGNOSTICS, qos("event"))
        self._drops = DropWindow()
        node.create_timer(1.0 / hz, self.publish)

    def publish(self, event: Optional[dict[str, Any]] = None) -> None:
        status = {**self.node.status(), **self.extra(), "stamp": time.time()}
        if event is not None:
            status["event"] = event
        self.pub.publish(msgs.String(data=jsonio.dumps(status, default=_jsonable)))
        self.diagnostics.publish(self.diagnostic_array(status))

    def diagnostic_array(self, status: dict[str, Any]) -> Any:
        """The node's ``DiagnosticArray`` for ``status``, stamped by the node's clock."""
        from robot_rl.nodes.diagnostics import diagnostic_fields

        recent = self._drops.update(int(status.get("dropped_messages") or 0), time.monotonic())
        d = diagnostic_fields(status, name=self.node.get_fully_qualified_name(), hardware_id=self.hardware_id,
                              recent_drops=recent)
        values = [msgs.KeyValue(key=k, value=v) for k, v in d.values]
        entry = msgs.DiagnosticStatus(level=bytes([d.level]), name=d.name, message=d.message,
                                      hardware_id=d.hardware_id, values=values)
        header = msgs.Header(stamp=self.node.get_clock().now().to_msg())
        return msgs.DiagnosticArray(header=header, status=[entry])


def _jsonable(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


# --- robot state out -------------------------------------------------------------------------


class RobotStatePublisher:
    """The four robot-state topics of a controller (``/joint_states``, ``/robot/tcp_*``)."""

    def __init__(self, node: Any, topics: dict[str, Any], frame_id: str, joint_names: list[str]) -> None:
        q = qos("stream_pub")
        self.frame_id, self.joint_names = frame_id, joint_names
        self.pose = node.create_publisher(msgs.PoseStamped, topics["tcp_pose"], q)
        self.twist = node.create_publisher(msgs.TwistStamped, topics["tcp_twist"], q)
        self.wrench = node.create_publisher(msgs.WrenchStamped, topics["tcp_wrench"], q)
        self.joints = node.create_publisher(msgs.JointState, topics["joint_states"], q)
        self.published = 0

    def publish(self, state: RobotState, stamp: float) -> None:
        """Publish ``state`` stamped ``stamp`` (the node's time: wall, or simulated in sim), joints first and
        the pose last."""
        out = convert.robot_state_to_msgs(state.replace(stamp=stamp), self.joint_names, self.frame_id)
        self.joints.publish(out.joints)
        self.twist.publish(out.twist)
        self.wrench.publish(out.wrench)
        self.pose.publish(out.pose)
        self.published += 1


class TransformPublisher:
    """tf, as tf2's broadcasters send it (:mod:`robot_rl.nodes.frames` says which frames).

    ``tf`` (reliable, keep-last 100, volatile) carries the transforms that move, once per
    state tick (:meth:`publish`); ``tf_static`` (reliable, keep-last 1, transient-local)
    carries the fixed ones, all in one message sent once here, which DDS keeps for
    subscribers that join later. Both names are relative, so they resolve under the
    session's namespace and two sessions keep their trees apart.
    """

    def __init__(self, node: Any, static: list[Any], stamp: float) -> None:
        self.pub = node.create_publisher(msgs.TFMessage, TF, qos("tf"))
        self.static = list(static)
        self.static_pub = None
        if self.static:
            self.static_pub = node.create_publisher(msgs.TFMessage, TF_STATIC, qos("tf_static"))
            self.static_pub.publish(self._message(self.static, stamp))
        self.published = 0

    def publish(self, transforms: list[Any], stamp: float) -> None:
        """``transforms`` (:class:`~robot_rl.nodes.frames.FrameTransform`) on ``tf``, stamped ``stamp``."""
        self.pub.publish(self._message(transforms, stamp))
        self.published += 1

    @staticmethod
    def _message(transforms: list[Any], stamp: float) -> Any:
        return convert.tf_message([(t.parent, t.child, t.translation, t.rotation) for t in transforms], stamp)


# --- a node whose work runs on the main thread (the actor) -----------------------------------


def run_with_worker(factory: Callable[[], Any], work: Callable[[Any], int], stop: Callable[[Any], None],
                    args: Optional[list[str]] = None) -> int:
    """``main()`` of a node that runs a loop of its own (the actor), with the executor on a thread.

    The first SIGINT/SIGTERM calls ``stop(node)`` (finish promptly, keep the node
    talking meanwhile); a second one interrupts. The executor stops spinning before the
    node is destroyed. Errors a user can fix are one line and a non-zero exit status,
    as in :func:`robot_rl.ros.run_node`.
    """
    import signal

    from robot_rl.ros.backend import backend
    from robot_rl.ros.runner import stop_with_parent

    stop_with_parent()  # a launcher killed with SIGTERM or -9 ends the actor as Ctrl-C would
    node = None
    done = threading.Event()
    spinner: Optional[threading.Thread] = None
    try:
        ros = backend()
        ros.init(args=args, signal_handler_options=_no_signal_handlers(ros))
        executor = ros.SingleThreadedExecutor()
        try:
            node = factory()
            executor.add_node(node)

            def spin() -> None:
                while not done.is_set():
                    executor.spin_once(timeout_sec=0.05)

            spinner = threading.Thread(target=spin, name="executor", daemon=True)
            spinner.start()
            signals = []

            def on_signal(signum: int, frame: Any) -> None:
                signals.append(signum)
                if len(signals) == 1:
                    stop(node)
                else:
                    raise KeyboardInterrupt

            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, on_signal)
            return int(work(node) or 0)
        except KeyboardInterrupt:
            return 130
        finally:
            done.set()
            if spinner is not None:
                spinner.join(timeout=5.0)
            executor.shutdown()
            if node is not None:
                node.destroy_node()
            ros.try_shutdown()
    except RobotRLError as err:
        print(f"robot-rl: {err}".splitlines()[0], file=sys.stderr)
        return err.exit_code
    except Exception as err:
        user_errors = getattr(sys.modules.get("robot_rl.ros.rclpy_backend"), "USER_ERRORS", ())
        if user_errors and isinstance(err, user_errors):
            print(f"robot-rl: {err}".splitlines()[0], file=sys.stderr)
            return 2
        raise


def _no_signal_handlers(ros: Any) -> Any:
    """The backend's "install no signal handlers" option for ``init``."""
    if ros.NAME == "rclpy":
        from rclpy.signals import SignalHandlerOptions

        return SignalHandlerOptions.NO
    return "NO"
