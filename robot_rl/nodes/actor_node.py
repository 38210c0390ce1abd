"""actor_node: a RobotEnv over topics, a policy, interventions, episodes (robot_rl.nodes.actor).

Parameters: ``config``; ``topics.{joint_states, tcp_pose, tcp_twist, tcp_wrench,
target_pose, gripper_command, posture}``; in sim ``topics.{sim_reset, sim_reset_done,
sim_task_state}``; with a SpaceMouse/keyboard ``topics.{spacenav_twist, spacenav_joy}``;
per observed camera ``topics.cameras.<name>.image`` (``sensor_msgs/Image``, or
``sensor_msgs/CompressedImage`` for a ``topic`` camera with ``transport: compressed``). The
policy and the number of episodes are ``ros.policy`` / ``ros.episodes`` in the session config.

The episodes run on the main thread; the executor spins on another. Ctrl-C ends the
episode in flight at the next step (the controller's watchdog then holds the arm),
prints the summary as one JSON line and exits 0.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from robot_rl.config.learning import default_actor_id
from robot_rl.nodes.actor import (
    ActorSession,
    Senders,
    make_topic_parts,
    summary_line,
)
from robot_rl.nodes.camera import TopicCamera, compressed
from robot_rl.nodes.common import (
    StatusPublisher,
    declare_topics,
    guarded,
    load_session,
    log_core_to_console,
    node_base,
    qos,
    run_with_worker,
)
from robot_rl.nodes.intervention import topic_devices
from robot_rl.nodes.topics import ROBOT_COMMANDS, ROBOT_STATE, actor_cameras
from robot_rl.ros import convert, msgs
from robot_rl.ros.errors import MessageError

Node = node_base()


class ActorNode(Node):
    def __init__(self) -> None:
        super().__init__("actor_node")
        log_core_to_console(self.get_name())
        cfg, config_path = load_session(self)
        sim = cfg.robot.backend == "sim"
        keys = [*ROBOT_STATE, *ROBOT_COMMANDS] + (["sim_reset", "sim_reset_done", "sim_task_state"] if sim else []) \
            + (["spacenav_twist", "spacenav_joy"] if topic_devices(cfg.intervention) else [])
        topics = declare_topics(self, keys, actor_cameras(cfg), ["image"])
        frame = cfg.ros.frame_id
        target = self.create_publisher(msgs.PoseStamped, topics["target_pose"], qos("event"))
        gripper = self.create_publisher(msgs.Float64, topics["gripper_command"], qos("event"))
        senders = Senders(
            target=lambda pos, quat: target.publish(convert.pose_stamped_msg(pos, quat, _now(self), frame)),
            gripper=lambda g: gripper.publish(convert.gripper_command_msg(g)))
        posture = self.create_publisher(msgs.JointState, topics["posture"], qos("event"))
        joints = [f"joint{i}" for i in range(1, 8)]
        senders.posture = lambda q, k: posture.publish(convert.posture_msg(joints, q, k, _now(self)))
        if sim:
            reset = self.create_publisher(msgs.String, topics["sim_reset"], qos("event"))
            senders.reset = lambda text: reset.publish(msgs.String(data=text))
        actor_id = cfg.learning.actor_id or default_actor_id()
        parts = make_topic_parts(cfg, topics, senders, actor_id=actor_id, stamp_clock=lambda: _now(self))
        self.session = ActorSession(cfg, parts, actor_id=actor_id, config_path=config_path)
        robot, latest = parts.robot, qos("latest_sub")
        self.create_subscription(msgs.PoseStamped, topics["tcp_pose"], guarded(
            lambda m: robot.on_pose(*convert.pose_from_msg(m), convert.stamp_from_msg(m.header.stamp))), latest)
        self.create_subscription(msgs.TwistStamped, topics["tcp_twist"],
                                 lambda m: robot.on_twist(convert.twist_from_msg(m)), latest)
        self.create_subscription(msgs.WrenchStamped, topics["tcp_wrench"],
                                 lambda m: robot.on_wrench(convert.wrench_from_msg(m)), latest)
        self.create_subscription(msgs.JointState, topics["joint_states"], guarded(
            lambda m: robot.on_joints(*convert.joint_state_from_msg(m))), latest)
        for name, camera in parts.cameras.items():
            kind, decode = ((msgs.CompressedImage, convert.compressed_image_from_msg) if compressed(cfg, name)
                            else (msgs.Image, convert.image_from_msg))
            sub = self.create_subscription(kind, topics["cameras"][name]["image"], _image_callback(camera, decode),
                                           latest)
            camera.count_publishers = getattr(sub, "get_publisher_count", None)
        if sim:
            task = parts.task
            self.create_subscription(msgs.JointState, topics["sim_task_state"], guarded(lambda m: task.on_ground_truth(
                m.name, convert.joint_state_from_msg(m)[1], convert.stamp_from_msg(m.header.stamp))), latest)
            self.create_subscription(msgs.String, topics["sim_reset_done"],
                                     guarded(lambda m: task.on_reset_done(m.data)), qos("event"))
        if parts.input is not None:
            device = parts.input
            self.create_subscription(msgs.Twist, topics["spacenav_twist"],
                                     lambda m: device.on_twist(convert.twist_from_msg(m)), qos("event"))
            self.create_subscription(msgs.Joy, topics["spacenav_joy"],
                                     lambda m: device.on_joy(convert.joy_from_msg(m)[1]), qos("event"))
        self.create_timer(1.0 / cfg.ros.target_hz, robot.resend)
        self.status_pub = StatusPublisher(self, self.session.status, cfg.ros.status_hz)

    def work(self) -> int:
        summary = self.session.run()
        self.status_pub.publish({"event": "finished"})
        print(summary_line(summary), flush=True)
        return 0


def _image_callback(camera: TopicCamera, decode: Callable[[Any], tuple]) -> Callable[[Any], None]:
    """Decode into ``camera``; a message it cannot use is dropped and counted, and the camera
    hears what it held (so a stream of only such images is one clear error, not a timeout)."""

    def on_message(msg: Any) -> None:
        try:
            camera.on_image(*decode(msg))
        except (MessageError, ValueError) as err:
            camera.refuse(convert.describe_image(msg), str(err))
            raise MessageError(str(err)) from None

    return on_message


def _now(node: Node) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


def main(args: list[str] | None = None) -> int:
    return run_with_worker(ActorNode, lambda node: node.work(), lambda node: node.session.stop(), args)


if __name__ == "__main__":
    sys.exit(main())
