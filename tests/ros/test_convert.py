"""Core values <-> ROS messages: images, stamps, poses (quaternion order), robot state."""

from __future__ import annotations

import numpy as np
import pytest

from robot_rl.interfaces import RobotState
from robot_rl.ros import convert, msgs
from robot_rl.ros.errors import MessageError


def test_stamp_round_trip_and_nanosecond_carry():
    msg = convert.stamp_to_msg(12.5)
    assert (msg.sec, msg.nanosec) == (12, 500_000_000)
    assert convert.stamp_from_msg(msg) == 12.5
    carry = convert.stamp_to_msg(3.9999999999)
    assert (carry.sec, carry.nanosec) == (4, 0)
    t = 1_712_345_678.123456
    assert abs(convert.stamp_from_msg(convert.stamp_to_msg(t)) - t) < 1e-6


def test_image_round_trip_is_rgb8_and_exact():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    msg = convert.image_to_msg(image, 5.25, "wrist")
    assert (msg.encoding, msg.height, msg.width, msg.step, msg.is_bigendian) == ("rgb8", 48, 64, 192, 0)
    assert msg.header.frame_id == "wrist" and len(msg.data) == 48 * 64 * 3
    back, stamp = convert.image_from_msg(msg)
    assert stamp == 5.25 and back.dtype == np.uint8 and np.array_equal(back, image)
    image[0, 0, 0] ^= 0xFF  # the message owns its copy of the pixels
    assert not np.array_equal(back, image)


def test_image_from_bgr8_and_padded_rows():
    rgb = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    bgr_padded = np.zeros((2, 12), dtype=np.uint8)  # step 12 > width*3 = 9
    bgr_padded[:, :9] = rgb[:, :, ::-1].reshape(2, 9)
    msg = msgs.Image(height=2, width=3, encoding="bgr8", step=12, data=bgr_padded.tobytes())
    back, _ = convert.image_from_msg(msg)
    assert np.array_equal(back, rgb)


@pytest.mark.parametrize("changes, reason", [
    (dict(encoding="mono8"), "encoding"),
    (dict(step=5), "step"),
    (dict(height=3), "bytes"),
    (dict(width=0), "empty"),
])
def test_images_a_node_cannot_use_raise_message_error(changes, reason):
    fields = dict(height=2, width=2, encoding="rgb8", step=6, data=bytes(12))
    fields.update(changes)
    with pytest.raises(MessageError, match=reason):
        convert.image_from_msg(msgs.Image(**fields))


def test_wrong_message_type_is_a_message_error():
    with pytest.raises(MessageError, match="expected Image"):
        convert.image_from_msg(msgs.PoseStamped())
    with pytest.raises(MessageError, match="expected Pose or PoseStamped"):
        convert.pose_from_msg(msgs.Twist())


def test_pose_quaternion_order_is_converted_once():
    quat_wxyz = np.array([0.5, 0.5, -0.5, 0.5])
    msg = convert.pose_stamped_msg(np.array([0.1, 0.2, 0.3]), quat_wxyz, 1.0, "base")
    o = msg.pose.orientation
    assert (o.x, o.y, o.z, o.w) == (0.5, -0.5, 0.5, 0.5)
    pos, quat = convert.pose_from_msg(msg)
    assert np.allclose(pos, [0.1, 0.2, 0.3]) and np.allclose(quat, quat_wxyz)
    pos2, quat2 = convert.pose_from_msg(msg.pose)  # a bare Pose too
    assert np.allclose(quat2, quat_wxyz)


def test_pose_from_msg_normalises_and_rejects_bad_quaternions():
    msg = msgs.Pose(orientation=msgs.Quaternion(x=0.0, y=0.0, z=0.0, w=2.0))
    assert np.allclose(convert.pose_from_msg(msg)[1], [1, 0, 0, 0])
    with pytest.raises(MessageError, match="zero quaternion"):
        convert.pose_from_msg(msgs.Pose(orientation=msgs.Quaternion(w=0.0)))
    with pytest.raises(MessageError, match="non-finite"):
        convert.pose_from_msg(msgs.Pose(position=msgs.Point(x=float("nan"))))


def test_twist_and_wrench_keep_linear_then_angular():
    v = np.arange(1.0, 7.0)
    t = convert.twist_stamped_msg(v, 2.0, "base")
    assert (t.twist.linear.x, t.twist.angular.z) == (1.0, 6.0)
    assert np.array_equal(convert.twist_from_msg(t), v)
    assert np.array_equal(convert.twist_from_msg(convert.twist_msg(v)), v)
    w = convert.wrench_stamped_msg(-v, 2.0, "base")
    assert (w.wrench.force.x, w.wrench.torque.z) == (-1.0, -6.0)
    assert np.array_equal(convert.wrench_from_msg(w), -v)


def test_robot_state_round_trip_through_four_messages():
    rng = np.random.default_rng(1)
    q = rng.normal(size=4)
    state = RobotState(stamp=100.25, tcp_pos=rng.normal(size=3), tcp_quat=q / np.linalg.norm(q),
                       tcp_twist=rng.normal(size=6), tcp_wrench=rng.normal(size=6), q=rng.normal(size=7),
                       dq=rng.normal(size=7), tau=rng.normal(size=7), gripper=0.3)
    names = [f"joint{i}" for i in range(1, 8)]
    m = convert.robot_state_to_msgs(state, names, "base")
    assert list(m.joints.name) == names + ["gripper"]
    back = convert.robot_state_from_msgs(m.pose, m.twist, m.wrench, m.joints)
    assert back.stamp == pytest.approx(100.25)
    for field in ("tcp_pos", "tcp_quat", "tcp_twist", "tcp_wrench", "q", "dq", "tau"):
        assert np.allclose(getattr(back, field), getattr(state, field)), field
    assert back.gripper == pytest.approx(0.3)


def test_joint_state_checks_lengths():
    msg = msgs.JointState(name=["a", "b"], position=[1.0])
    with pytest.raises(MessageError, match="2 names but 1 positions"):
        convert.joint_state_from_msg(msg)
    ok = msgs.JointState(name=["a"], position=[1.0])  # velocity and effort may be left empty
    names, q, dq, tau = convert.joint_state_from_msg(ok)
    assert names == ["a"] and dq.tolist() == [0.0] and tau.tolist() == [0.0]


def test_gripper_command_is_clipped_and_checked():
    assert convert.gripper_command_from_msg(convert.gripper_command_msg(1.7)) == 1.0
    assert convert.gripper_command_from_msg(msgs.Float64(data=-0.2)) == 0.0
    with pytest.raises(MessageError):
        convert.gripper_command_from_msg(msgs.Float64(data=float("inf")))


def test_joy_and_camera_info():
    joy = convert.joy_msg([0.5, -1.0], [0, 1, 1], 3.0)
    axes, buttons = convert.joy_from_msg(joy)
    assert axes.tolist() == [0.5, -1.0] and buttons == (0, 1, 1)
    k = np.array([[600.0, 0, 320], [0, 600.0, 240], [0, 0, 1]])
    info = convert.camera_info_msg(640, 480, k, 1.0, "cam")
    assert info.width == 640 and np.array_equal(np.asarray(info.k).reshape(3, 3), k)
    assert np.asarray(info.p).reshape(3, 4)[:, 3].tolist() == [0.0, 0.0, 0.0]


def test_posture_messages_round_trip_and_are_checked():
    names = [f"joint{i}" for i in range(1, 8)]
    q = np.linspace(-0.5, 0.5, 7)
    back, stiffness = convert.posture_from_msg(convert.posture_msg(names, q, 40.0, 1.0))
    assert np.array_equal(back, q) and stiffness == 40.0
    assert convert.posture_from_msg(convert.posture_msg(names, q, None, 1.0))[1] is None
    assert convert.posture_from_msg(convert.posture_msg(names, None, None, 1.0)) == (None, None)
    bad = [
        msgs.JointState(name=names[:6], position=list(q[:6])),
        msgs.JointState(name=names, position=[*q[:6], float("nan")]),
        msgs.JointState(name=names, position=list(q), effort=[40.0] * 6 + [10.0]),
        msgs.JointState(name=names, position=list(q), effort=[-1.0] * 7),
    ]
    for msg in bad:
        with pytest.raises(MessageError):
            convert.posture_from_msg(msg)


def test_tf_message_round_trip_keeps_frames_order_and_quaternion_order():
    quat = np.array([0.5, 0.5, -0.5, 0.5])  # w, x, y, z
    tf = convert.tf_message([("base", "tcp", np.array([0.4, -0.1, 0.3]), quat),
                             ("tcp", "wrist_color_optical_frame", np.zeros(3), np.array([1.0, 0, 0, 0]))], 7.25)
    assert type(tf).__name__ == "TFMessage" and len(tf.transforms) == 2
    first = tf.transforms[0]
    assert (first.transform.rotation.x, first.transform.rotation.w) == (0.5, 0.5)  # named fields, ROS order
    parent, child, pos, q, stamp = convert.transform_from_msg(first)
    assert (parent, child, stamp) == ("base", "tcp", 7.25)
    assert np.allclose(pos, [0.4, -0.1, 0.3]) and np.allclose(q, quat)
    assert convert.transform_from_msg(tf.transforms[1])[:2] == ("tcp", "wrist_color_optical_frame")
    clock = convert.clock_msg(3.5)
    assert (clock.clock.sec, clock.clock.nanosec) == (3, 500_000_000)


@pytest.mark.parametrize("change, reason", [
    (lambda t: setattr(t.transform.translation, "x", float("nan")), "non-finite"),
    (lambda t: setattr(t.transform.rotation, "z", float("inf")), "non-finite"),
    (lambda t: setattr(t.transform, "rotation", msgs.Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)), "zero quaternion"),
    (lambda t: setattr(t, "child_frame_id", ""), "both frame ids"),
    (lambda t: setattr(t.header, "frame_id", ""), "both frame ids"),
])
def test_transforms_a_node_cannot_use_raise_message_error(change, reason):
    t = convert.transform_stamped_msg("base", "tcp", np.zeros(3), np.array([1.0, 0, 0, 0]), 1.0)
    change(t)
    with pytest.raises(MessageError, match=reason):
        convert.transform_from_msg(t)
    with pytest.raises(MessageError):
        convert.transform_from_msg(msgs.PoseStamped())
