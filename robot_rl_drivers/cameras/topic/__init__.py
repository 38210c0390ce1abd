"""A camera another driver publishes (realsense2_camera, usb_cam, ...): ``cameras.<name>.backend: topic``.

robot_rl opens no device and starts no camera node for it: the actor node reads the
topic its ``hardware`` block (:mod:`.settings`) names, through
:class:`robot_rl.nodes.camera.TopicCamera`.
"""

from __future__ import annotations

from robot_rl_drivers.cameras.topic.settings import TopicCameraSettings
from robot_rl_drivers.spec import CameraSpec

SPEC = CameraSpec(name="topic", folder="topic", settings=TopicCameraSettings, reads_topic=True,
                  doc="backend topic is another driver's image topic, read by the actor node; robot_rl opens no "
                      "device for it")
