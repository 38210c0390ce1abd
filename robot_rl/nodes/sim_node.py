"""sim_node: one MuJoCo world in real time, on the same topics as a real robot (robot_rl.nodes.sim).

Publishes what the controller and camera nodes publish (``/joint_states``,
``/robot/tcp_*`` at ``ros.state_hz``; per camera ``image_raw`` rgb8 and
``camera_info`` at its fps, rendered only while someone subscribes) and takes the same
commands (``/robot/target_pose``, ``/robot/gripper/command``, ``/robot/posture``) under
the same controller rules and watchdog. Sim only: ``/sim/reset`` -> ``/sim/reset_done``, ground truth on
``/sim/task_state`` and ``/sim/success`` (see :mod:`robot_rl.nodes.topics`).

Time: the simulated time (:meth:`robot_rl.nodes.sim.SimServer.now`, monotonic across
resets) goes out on ``/clock`` (``rosgraph_msgs/Clock``, best-effort keep-last 1 like
rclcpp's ClockQoS) at every state tick, and stamps every message this node publishes
(and the reset answers), so the session's other nodes, which run with ``use_sim_time``,
share one clock with it. The node's own timers run on the steady clock: it paces
physics to the wall clock and is the one that moves ``/clock``.

tf (:mod:`robot_rl.nodes.frames`): ``ros.frame_id`` -> ``ros.tcp_frame_id`` on ``tf`` at
every state tick, with the pose and stamp of ``/robot/tcp_pose``; the cameras' optical
frames from the scene on ``tf_static``, once (a camera's ``mount`` is not used in sim).

Parameters: ``config``; ``topics.{joint_states, tcp_pose, tcp_twist, tcp_wrench,
target_pose, gripper_command, posture, sim_reset, sim_reset_done, sim_task_state,
sim_success}``;
per configured camera (not ``backend: topic``) ``topics.cameras.<name>.{image, info}``; ``joint_prefix``
(default empty), put before the arm's joint names on ``/joint_states`` (``sim.arm``: ``joint1`` ..
``joint7`` on the Panda, ``shoulder_pan_joint`` .. ``wrist_3_joint`` on the UR5e, as ur_description names them).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from robot_rl.nodes.camera import own_cameras
from robot_rl.nodes.common import (
    RobotStatePublisher,
    StatusPublisher,
    TransformPublisher,
    declare_topics,
    guarded,
    load_session,
    log_core_to_console,
    node_base,
    param_or,
    qos,
    subscribe_commands,
)
from robot_rl.nodes.frames import tcp_transform
from robot_rl.nodes.sim import SimServer
from robot_rl.nodes.task import parse_reset_request
from robot_rl.nodes.topics import CLOCK, ROBOT_COMMANDS, ROBOT_STATE, SIM, camera_frame_id, task_state_names
from robot_rl.ros import convert, msgs, run_node

Node = node_base()


class SimNode(Node):
    def __init__(self) -> None:
        super().__init__("sim_node")
        log_core_to_console(self.get_name())
        cfg, _ = load_session(self)
        cameras = own_cameras(cfg)  # a topic camera is another driver's
        topics = declare_topics(self, [*ROBOT_STATE, *ROBOT_COMMANDS, *SIM], cameras, ["image", "info"])
        prefix = param_or(self, "joint_prefix", "")
        self.sim = sim = SimServer(cfg, cameras=cameras)
        joints = [f"{prefix}{name}" for name in sim.world.arm.joint_names]
        self.state_pub = RobotStatePublisher(self, topics, cfg.ros.frame_id, joints)
        self.truth_pub = self.create_publisher(msgs.JointState, topics["sim_task_state"], qos("stream_pub"))
        self.success_pub = self.create_publisher(msgs.Bool, topics["sim_success"], qos("stream_pub"))
        self.done_pub = self.create_publisher(msgs.String, topics["sim_reset_done"], qos("event"))
        self.truth_names = task_state_names(sim.state_dim)
        controller = sim.controller
        subscribe_commands(self, topics, lambda: controller)
        self.create_subscription(msgs.String, topics["sim_reset"],
                                 guarded(lambda m: self.on_reset(parse_reset_request(m.data))), qos("event"))
        for name, cam in ((n, cfg.cameras[n]) for n in cameras):
            image = self.create_publisher(msgs.Image, topics["cameras"][name]["image"], qos("image_pub"))
            info = self.create_publisher(msgs.CameraInfo, topics["cameras"][name]["info"], qos("image_pub"))
            self.create_timer(1.0 / cam.fps, lambda n=name, i=image, c=info: self.publish_camera(n, i, c))
        self.clock_pub = self.create_publisher(msgs.Clock, CLOCK, qos("clock"))
        self.frames = (cfg.ros.frame_id, cfg.ros.tcp_frame_id)
        self.tf = TransformPublisher(self, sim.camera_transforms(*self.frames), sim.now())
        self.moving_cameras = bool(sim.camera_transforms(*self.frames, moving=True))
        for name in (n for n in cameras if cfg.cameras[n].mount is not None):
            self.get_logger().warning(f"cameras.{name}.mount is not used in sim: the scene says where its cameras are")
        self.status_pub = StatusPublisher(self, sim.status, cfg.ros.status_hz, hardware_id="robot sim")
        self.film = None  # ros.video: every episode filmed from the scene's cameras (robot-rl eval --graph)
        if cfg.ros.video is not None and sim.world.cameras:
            from robot_rl.envs.robot_env import RobotEnv  # only a filmed session needs OpenCV and the writer
            from robot_rl.nodes.sim_film import EpisodeFilm

            self.film = EpisodeFilm(cfg.ros.video, RobotEnv.metadata["render_fps"],
                                    lambda: {name: sim.render(name) for name in sim.world.cameras})
        elif cfg.ros.video is not None:
            self.get_logger().warning(f"ros.video {cfg.ros.video}: the scene has no camera to film with")
        self.create_timer(1.0 / cfg.ros.state_hz, self.tick)

    def create_timer(self, timer_period_sec: float, callback: Any, callback_group: Any = None, clock: Any = None,
                     **kwargs: Any) -> Any:
        """Every timer of this node runs on the steady clock, whatever ``use_sim_time`` says.

        The sim paces physics to the wall clock and publishes ``/clock`` from its state
        timer; on ROS time (simulated, under rclpy with ``use_sim_time``) that timer would
        wait for a ``/clock`` only it can send.
        """
        from robot_rl import ros

        steady = clock if clock is not None else ros.Clock(clock_type=ros.ClockType.STEADY_TIME)
        return super().create_timer(timer_period_sec, callback, callback_group=callback_group, clock=steady, **kwargs)

    def tick(self) -> None:
        state = self.sim.tick()
        self.clock_pub.publish(convert.clock_msg(self.sim.now()))
        if state is not None:
            self.publish_state(state)
        for event in self.sim.controller.pop_events():
            self.status_pub.publish(event)

    def publish_state(self, state) -> None:
        stamp = self.sim.now()
        values, success = self.sim.ground_truth()
        self.state_pub.publish(state, stamp)
        moving = self.sim.camera_transforms(*self.frames, moving=True) if self.moving_cameras else []
        self.tf.publish([tcp_transform(state, *self.frames), *moving], stamp)
        self.truth_pub.publish(msgs.JointState(header=convert.header(stamp, ""), name=self.truth_names,
                                               position=values.tolist()))
        self.success_pub.publish(msgs.Bool(data=success))
        if self.film is not None:
            self.film.tick(stamp, success)

    def on_reset(self, request: dict) -> None:
        resets = self.sim.resets
        answer = self.sim.reset(request)
        if self.film is not None and self.sim.resets > resets:  # a repeated request is no new episode
            self.film.reset(self.sim.now())
        self.clock_pub.publish(convert.clock_msg(self.sim.now()))
        if self.sim.controller.state is not None:
            self.publish_state(self.sim.controller.state)
        self.done_pub.publish(msgs.String(data=json.dumps(answer)))

    def publish_camera(self, name: str, image_pub, info_pub) -> None:
        if image_pub.get_subscription_count() == 0 and info_pub.get_subscription_count() == 0:
            return  # rendering costs ~2 ms per image on a CPU: only for someone listening
        image, stamp, frame = self.sim.render(name), self.sim.now(), camera_frame_id(name)
        image_pub.publish(convert.image_to_msg(image, stamp, frame))
        info_pub.publish(convert.camera_info_msg(image.shape[1], image.shape[0], self.sim.intrinsics(name),
                                                 stamp, frame))

    def destroy_node(self) -> None:
        if self.film is not None:
            path = self.film.close()
            self.get_logger().info(f"video of {self.film.episodes} episodes: {path}")
        self.sim.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(SimNode, args)


if __name__ == "__main__":
    sys.exit(main())
