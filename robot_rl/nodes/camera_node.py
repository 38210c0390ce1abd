"""camera_node: one camera backend from the session config -> ``image_raw`` (rgb8) + ``camera_info``.

Reads the camera ``cameras.<camera>`` of the config (``realsense`` or ``opencv``,
through :func:`robot_rl_drivers.cameras.make_camera`) at its ``fps`` and publishes each
new frame, stamped with the frame's capture time, with the sensor QoS of DESIGN.md
(reliable, keep-last 1; subscribers read best-effort). ``camera_info`` carries the
backend's intrinsics when it has them (an ``intrinsics`` 3x3 attribute), else an all-zero
K, which ROS reads as "uncalibrated". A camera that stops delivering ends the node with
one error line (the launch front end reports it).

Parameters: ``config``; ``camera`` (its name in ``cameras``); ``topics.{image, info}``;
``frame_id`` (default ``<camera>_color_optical_frame``).
"""

from __future__ import annotations

import sys

import numpy as np

from robot_rl.errors import ConfigError
from robot_rl.nodes.common import (
    StatusPublisher,
    declare_topics,
    load_session,
    log_core_to_console,
    node_base,
    param_or,
    qos,
    required_string,
)
from robot_rl.nodes.topics import camera_frame_id
from robot_rl.ros import convert, msgs, run_node

Node = node_base()


class CameraNode(Node):
    def __init__(self) -> None:
        super().__init__("camera_node")
        log_core_to_console(self.get_name())
        cfg, path = load_session(self)
        name = required_string(self, "camera")
        if name not in cfg.cameras:
            raise ConfigError(f"{path}: camera_node parameter camera '{name}' is not in cameras "
                              f"({', '.join(cfg.cameras) or 'none'})")
        topics = declare_topics(self, ["image", "info"])
        self.frame_id = param_or(self, "frame_id", camera_frame_id(name))
        self.image_pub = self.create_publisher(msgs.Image, topics["image"], qos("image_pub"))
        self.info_pub = self.create_publisher(msgs.CameraInfo, topics["info"], qos("image_pub"))
        self.published = self.repeated = 0
        self.last_stamp: float | None = None
        self.status_pub = StatusPublisher(self, lambda: {"camera": name, "frames": self.published,
                                                         "repeated_frames": self.repeated}, cfg.ros.status_hz,
                                          hardware_id=f"camera {name} ({cfg.cameras[name].backend})")
        from robot_rl_drivers.cameras import make_camera

        self.camera = make_camera(name, cfg.cameras[name], file=str(path))  # last: nothing after it can fail
        self.k = np.asarray(getattr(self.camera, "intrinsics", np.zeros((3, 3))), dtype=float)
        self.create_timer(1.0 / cfg.cameras[name].fps, self.tick)

    def tick(self) -> None:
        frame = self.camera.read()
        if frame.stamp == self.last_stamp:
            self.repeated += 1  # the camera has no newer frame yet: publish each frame once
            return
        self.last_stamp = frame.stamp
        h, w = frame.image.shape[:2]
        self.image_pub.publish(convert.image_to_msg(frame.image, frame.stamp, self.frame_id))
        self.info_pub.publish(convert.camera_info_msg(w, h, self.k, frame.stamp, self.frame_id))
        self.published += 1

    def destroy_node(self) -> None:
        camera = getattr(self, "camera", None)
        if camera is not None:
            camera.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(CameraNode, args)


if __name__ == "__main__":
    sys.exit(main())
