"""The fake pylibfranka (tests/support/fake_pylibfranka.py) keeps pylibfranka's API and the Panda's kinematics."""

import numpy as np
import pytest
from fake_pylibfranka import Q0, forward_kinematics


def test_the_fake_has_pylibfranka_s_api():
    franka = pytest.importorskip("pylibfranka")
    for cls, names in {
        "Robot": ["set_collision_behavior", "load_model", "start_torque_control", "automatic_error_recovery",
                  "read_once", "stop"],
        "ActiveControlBase": ["readOnce", "writeOnce"],
        "Model": ["zero_jacobian", "coriolis", "gravity"],
        "Torques": ["tau_J", "motion_finished"],
        "Duration": ["to_sec"],
        "RobotState": ["q", "dq", "O_T_EE", "O_F_ext_hat_K", "tau_J", "time", "robot_mode",
                       "control_command_success_rate", "current_errors", "last_motion_errors"],
        "Gripper": ["homing", "move", "grasp", "read_once", "stop"],
        "GripperState": ["width", "max_width", "is_grasped"],
        "RealtimeConfig": ["kEnforce", "kIgnore"],
    }.items():
        real = getattr(franka, cls)
        for name in names:
            assert hasattr(real, name), f"pylibfranka.{cls} has no {name}: the fake (and the driver) drifted"
    for exc in ("NetworkException", "ControlException", "CommandException"):
        assert issubclass(getattr(franka, exc), RuntimeError)


def test_the_fake_kinematics_match_the_panda_home_pose():
    # At the Panda's usual home posture the hand points down, about 0.31 m in front.
    pose, jac = forward_kinematics(np.array([0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4]))
    assert np.allclose(pose[:3, 3], [0.307, 0.0, 0.487], atol=0.01)
    assert np.allclose(pose[:3, 2], [0.0, 0.0, -1.0], atol=1e-6)
    # The Jacobian is the derivative of the TCP position.
    q = Q0.copy()
    p0 = forward_kinematics(q)[0][:3, 3]
    dq = np.full(7, 1e-6)
    p1 = forward_kinematics(q + dq)[0][:3, 3]
    assert np.allclose((p1 - p0), forward_kinematics(q)[1][:3] @ dq, atol=1e-9)
