"""The session's tf frames, without ROS: which transforms the sim or controller node publishes.

Frames (REP 105 names are for mobile robots; an arm cell needs only these):

* ``ros.frame_id`` (default ``base``): the arm's base, the frame of ``/robot/tcp_pose`` and
  of the targets;
* ``ros.tcp_frame_id`` (default ``tcp``): the TCP, published as ``base -> tcp`` on ``tf``
  with the same pose and stamp as ``/robot/tcp_pose``;
* ``<camera>_color_optical_frame`` (:func:`robot_rl.nodes.topics.camera_frame_id`, the
  ``frame_id`` of the camera's images): z forward, x right, y down, the optical
  convention of ``sensor_msgs/CameraInfo``, so a point ``p`` in it projects to pixel
  ``(fx * x / z + cx, fy * y / z + cy)``. A camera fixed in the cell hangs under
  ``base``, one on the hand under ``tcp``; both on ``tf_static``.

Where the camera poses come from: in sim, from the MuJoCo scene
(:meth:`robot_rl.nodes.sim.SimServer.camera_transforms`; the world frame is the arm's
base, whose link sits at the origin); on a real arm, from ``cameras.<name>.mount``
(:class:`robot_rl.config.sections.CameraMount`, the hand-eye calibration); a real camera
without one gets no tf.

Translations are metres; rotations are ``(w, x, y, z)`` quaternions as everywhere in
robot_rl (:mod:`robot_rl.ros.convert` writes them as ROS's ``x, y, z, w``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from robot_rl.config.sections import CameraConfig
from robot_rl.control.transforms import mat_to_quat, quat_conj, quat_mul, quat_normalize, quat_to_mat
from robot_rl.interfaces import RobotState
from robot_rl.nodes.topics import camera_frame_id

#: The optical frame in MuJoCo's camera frame (which looks along -z with y up): a half
#: turn about x, so x stays right while y turns down and z forward.
OPTICAL_IN_MUJOCO_CAMERA = np.array([0.0, 1.0, 0.0, 0.0])


@dataclass(frozen=True)
class FrameTransform:
    """``child``'s pose in ``parent``: its origin (metres) and its axes as a ``(w, x, y, z)`` quaternion."""

    parent: str
    child: str
    translation: np.ndarray
    rotation: np.ndarray


def compose(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``a * b`` for poses ``(translation, rotation)``: ``b`` given in frame ``a``, returned in ``a``'s parent."""
    pos_a, quat_a = a
    pos_b, quat_b = b
    return pos_a + quat_to_mat(quat_a) @ pos_b, quat_normalize(quat_mul(quat_a, quat_b))


def inverse(pose: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The inverse pose: where the parent sits in the child's frame."""
    pos, quat = pose
    inv = quat_conj(quat_normalize(quat))
    return -(quat_to_mat(inv) @ pos), inv


def relative(parent: tuple[np.ndarray, np.ndarray], child: tuple[np.ndarray, np.ndarray]
             ) -> tuple[np.ndarray, np.ndarray]:
    """``child``'s pose in ``parent``'s frame, both given in one common frame."""
    return compose(inverse(parent), child)


def point_in_frame(point: np.ndarray, frame: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``point`` (given in the frame's parent) expressed in ``frame``."""
    pos, quat = frame
    return quat_to_mat(quat).T @ (np.asarray(point, dtype=np.float64) - pos)


def optical_from_mujoco(cam_pos: np.ndarray, cam_mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A MuJoCo camera's pose (``data.cam_xpos``, ``data.cam_xmat``) -> its optical frame's pose."""
    quat = mat_to_quat(np.asarray(cam_mat, dtype=np.float64).reshape(3, 3))
    return np.asarray(cam_pos, dtype=np.float64).copy(), quat_normalize(quat_mul(quat, OPTICAL_IN_MUJOCO_CAMERA))


def tcp_transform(state: RobotState, base_frame: str, tcp_frame: str) -> FrameTransform:
    """``base -> tcp`` from a robot state: the pose ``/robot/tcp_pose`` carries."""
    return FrameTransform(base_frame, tcp_frame, np.asarray(state.tcp_pos, dtype=np.float64).copy(),
                          quat_normalize(state.tcp_quat))


def mount_transforms(cameras: Mapping[str, CameraConfig], base_frame: str, tcp_frame: str) -> list[FrameTransform]:
    """The static transforms of the cameras that have a ``mount`` (a real cell's hand-eye calibration)."""
    out = []
    for name, cam in cameras.items():
        mount = cam.mount
        if mount is None:
            continue
        parent = base_frame if mount.parent == "base" else tcp_frame
        out.append(FrameTransform(parent, camera_frame_id(name), np.array(mount.xyz, dtype=np.float64),
                                  mount.quat_wxyz))
    return out
