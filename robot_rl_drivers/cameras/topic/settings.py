"""``cameras.<name>.hardware`` of a camera another driver publishes (``backend: topic``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from robot_rl.config.loader import param
from robot_rl.config.ros import check_topic_name


@dataclass
class TopicCameraSettings:
    """A camera another driver publishes: robot_rl starts no camera node for it, the actor
    subscribes to ``topic``.

    ``transport: raw`` reads ``sensor_msgs/Image`` (``rgb8``, ``bgr8``, ``rgba8`` or
    ``bgra8``) on ``topic``; ``compressed`` reads ``sensor_msgs/CompressedImage`` on
    ``<topic>/compressed``, image_transport's name for it (a colour JPEG or PNG). The
    images must be the camera's ``width`` x ``height``. realsense2_camera's colour stream
    on ROS 2 Jazzy (``ros2 launch realsense2_camera rs_launch.py``, camera_namespace and
    camera_name both ``camera``) is ``/camera/camera/color/image_raw``. A relative name
    resolves under the session's namespace.
    """

    topic: str = param(doc="the image topic (the base topic for compressed), e.g. /camera/camera/color/image_raw")
    transport: Literal["raw", "compressed"] = param(
        "raw", doc="raw: sensor_msgs/Image on topic; compressed: sensor_msgs/CompressedImage on <topic>/compressed")

    def __post_init__(self) -> None:
        check_topic_name(self.topic, "topic")

    @property
    def subscribed_topic(self) -> str:
        """The topic the actor subscribes to (image_transport's ``/compressed`` appended for compressed)."""
        return self.topic if self.transport == "raw" else f"{self.topic}/compressed"
