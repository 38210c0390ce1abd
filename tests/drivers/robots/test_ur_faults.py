"""A UR that stops, unplugs, answers on no address, or is not in remote control (fake ur_rtde).

Each is one line naming the UR and what to do; the arm is stopped (``speedStop`` sent
while a session runs); an episode in flight ends as failed with every transition kept;
``recover()`` clears what can be cleared from here and asks a person for the rest.
"""

from __future__ import annotations

import importlib.util
import time

import fake_rtde
import numpy as np
import pytest
from polling import wait_for
from ur_rig import IP, make_ur, replay, session_rows, ur_hardware, ur_robot_config, write_scenario

from robot_rl.errors import DeviceError, RobotFault
from robot_rl.tasks import load_config


def one_line(text: str) -> str:
    assert "\n" not in text and text.startswith(f"UR at {IP}") or text.startswith(f"cannot reach the UR at {IP}"), text
    return text


def names(log) -> list[str]:
    return [c[0] for c in fake_rtde.load_calls(log)]


# --------------------------------------------------------------------------- protective stop


def test_a_protective_stop_is_a_robot_fault_and_recover_unlocks_it_after_the_delay(ur):
    robot, log = ur({"protective_stop_at": 150, "unlock_window_s": 0.3}, hardware={"recovery": {"unlock_delay_s": 0.1}})
    state = robot.state()
    old_target = state.tcp_pos + np.array([0.0, 0.0, -0.01])
    robot.command(old_target, state.tcp_quat)
    wait_for(lambda: robot.fault is not None)
    assert one_line(robot.fault) == (f"UR at {IP} is in protective stop: clear the cause (a collision, a limit), "
                                     "then robot_rl unlocks it 0.1 s after the stop")
    with pytest.raises(RobotFault) as err:
        robot.state()
    assert err.value.recoverable and err.value.state is not None and str(err.value) == robot.fault
    with pytest.raises(RobotFault):
        robot.command(state.tcp_pos, state.tcp_quat)
    robot.hold()  # never raises
    assert names(log)[-1] == "speedStop"

    start = time.monotonic()
    robot.recover()  # the dashboard refuses within 0.3 s of the stop: waits, retries, unlocks, re-uploads
    assert time.monotonic() - start >= 0.1
    assert robot.fault is None and np.all(np.isfinite(robot.state().tcp_pos))
    calls = names(log)
    assert calls.count("dashboard.unlockProtectiveStop") >= 2, "the refused unlock was retried"
    assert calls.index("dashboard.closeSafetyPopup") < calls.index("reuploadScript")
    time.sleep(0.1)
    robot.close()
    assert robot.stats().sessions == 2
    cycles = fake_rtde.load_cycles(log)
    replay(session_rows(cycles, 1), robot.cfg, robot.hw, [("target", old_target, state.tcp_quat)], closed=False)
    # Session 2 starts the law at the measured pose: replaying it with no target reproduces it.
    _, ctrl, first = replay(session_rows(cycles, 2), robot.cfg, robot.hw, [])
    assert np.array_equal(first.twist, np.zeros(6)) and not np.allclose(ctrl.target_pos, old_target)


def test_without_auto_unlock_recover_asks_a_person_to_unlock_on_the_pendant(ur):
    robot, log = ur({"protective_stop_at": 60}, hardware={"recovery": {"auto_unlock": False}})
    wait_for(lambda: robot.fault is not None)
    assert "unlock it on the teach pendant" in one_line(robot.fault)
    with pytest.raises(RobotFault, match="unlock it on the teach pendant, then recover"):
        robot.recover()
    assert "dashboard.unlockProtectiveStop" not in names(log)


def test_an_unlock_the_ur_keeps_refusing_ends_in_a_person_after_the_timeout(ur):
    robot, _ = ur({"protective_stop_at": 60, "unlock": "refuse"}, hardware={"recovery": {"timeout_s": 1.0}})
    wait_for(lambda: robot.fault is not None)
    with pytest.raises(RobotFault) as err:
        robot.recover()
    assert one_line(str(err.value)).startswith(f"UR at {IP} is in protective stop and refuses to unlock")
    assert "unlock it on the teach pendant" in str(err.value)


@pytest.mark.parametrize("scenario, line", [
    ({"protective_stop_at": 400, "unlock_window_s": 0.1}, f"UR at {IP} is in protective stop"),
    ({"disconnect_at": 400, "reconnect_after_s": 0.0}, f"UR at {IP}: lost the connection"),
], ids=["protective_stop", "cable_pulled"])
def test_a_stop_mid_episode_ends_it_as_failed_and_keeps_its_data(ur, tmp_path, scenario, line):
    """RobotEnv over the UR backend (the Franka's path): the step that meets the stop ends the
    episode (truncated, not a success, the fault in info), every transition reaches the
    replay log, recover() runs once, and the next episode goes on."""
    from robot_rl.data.transition import Step
    from robot_rl.envs.robot_env import RobotEnv
    from robot_rl.envs.task import EpisodeTask
    from robot_rl.nodes.robot import WallClock
    from robot_rl.training.episode_log import TrainingLog

    class StayTask(EpisodeTask):
        def reset(self, rng):
            pass

        def success(self):
            return False

    robot, _ = ur(scenario)
    cfg = load_config("configs/pick_cube.yaml", ["env.control_hz=20"])
    cfg.robot = robot.cfg
    env = RobotEnv(cfg, robot, {}, WallClock(), StayTask())
    book = TrainingLog(tmp_path / "run", env.observation_space, env.action_space)
    recovered = []
    handler = env.fault_handler
    env.fault_handler = lambda r, fault: (recovered.append(str(fault)), handler(r, fault))

    obs, _ = env.reset(seed=0)
    steps, info = [], {}
    for t in range(200):
        action = np.array([0.3, 0.0, -0.2, 0.0, 0.0, 0.0, 0.0], np.float32)
        nxt, reward, terminated, truncated, info = env.step(action)
        step = Step(0, t, obs, action, reward, terminated, truncated, nxt)
        steps.append(step)
        book.add(step)
        obs = nxt
        if terminated or truncated:
            break
    assert truncated and not terminated and not info["success"] and len(steps) > 3
    assert info["robot_fault"].startswith(line)
    assert len(recovered) == 1 and robot.fault is None
    logged = list(book.tail(0))
    assert len(logged) == 1 and len(logged[0].steps) == len(steps), "every transition of the episode was kept"
    assert logged[0].steps[-1].truncated
    env.reset(seed=1)  # the next episode runs on the recovered arm
    _, _, _, truncated, info = env.step(np.zeros(7, np.float32))
    assert not truncated and "robot_fault" not in info


# --------------------------------------------------------------------------- connection


def test_a_pulled_cable_stops_the_arm_and_recover_says_what_to_do_until_it_is_back(ur):
    robot, log = ur({"disconnect_at": 100, "reconnect_after_s": 0.6})
    state = robot.state()
    wait_for(lambda: robot.fault is not None)
    assert one_line(robot.fault) == (f"UR at {IP}: lost the connection (ur_rtde reports the RTDE connection "
                                     "closed): check the network cable and that the UR is on, then recover")
    assert names(log)[-1] == "speedStop", "the loop tried to stop the arm"
    with pytest.raises(RobotFault, match=f"UR at {IP}: lost the connection \\(reconnecting failed\\): check the "
                                         "network cable"):
        robot.recover()
    time.sleep(0.6)  # the cable is back
    robot.recover()
    after = robot.state()
    assert robot.fault is None and np.all(np.isfinite(after.tcp_pos))
    assert np.linalg.norm(after.tcp_pos - state.tcp_pos) < 0.01  # no target was sent: it stayed
    assert "receive.reconnect" in names(log)


def test_a_wrong_address_is_one_line_at_start(tmp_path, monkeypatch):
    with pytest.raises(DeviceError) as err:
        make_ur(tmp_path, monkeypatch, {"reachable": False})
    assert str(err.value) == (f"cannot reach the UR at {IP} (RuntimeError: Timeout connecting to UR dashboard "
                              "server.): check robot.hardware.ip, the network cable, and that this PC has an address "
                              "in the UR's subnet")


def test_an_address_that_never_answers_times_out_in_one_line(tmp_path, monkeypatch):
    start = time.monotonic()
    with pytest.raises(DeviceError) as err:
        make_ur(tmp_path, monkeypatch, {"connect": "hang"}, hardware={"connect_timeout_s": 1.0})
    assert str(err.value) == (f"the UR at {IP} did not answer within 1 s (is it on, is robot.hardware.ip right, is "
                              "the network cable in?)")
    assert time.monotonic() - start < 10.0


@pytest.mark.parametrize("scenario, message", [
    ({"remote": False}, f"UR at {IP} is not in remote control: on the teach pendant, switch to Remote Control"),
    ({"safety_mode": 3}, f"UR at {IP} is in protective stop: clear the cause (a collision, a limit), unlock it on "
                         "the teach pendant, then start again"),
    ({"robot_mode": 3}, f"UR at {IP} is not running (robot mode POWER_OFF (3)): power it on and release the brakes"),
    ({"safety_mode": 7}, f"UR at {IP} is in emergency stop (the teach pendant's button): release the emergency "
                         "stop, then power it on"),
])
def test_a_ur_that_cannot_be_driven_is_one_line_at_start(tmp_path, monkeypatch, scenario, message):
    with pytest.raises(DeviceError) as err:
        make_ur(tmp_path, monkeypatch, scenario)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_missing_ur_rtde_names_the_extra(tmp_path, monkeypatch):
    if importlib.util.find_spec("rtde_control") is not None:
        pytest.skip("ur_rtde is installed here")
    from robot_rl_drivers.robots.ur.robot import URRobot

    write_scenario(tmp_path, monkeypatch)
    with pytest.raises(DeviceError) as err:
        URRobot(ur_robot_config(), ur_hardware())
    assert str(err.value).startswith("the UR backend needs ur_rtde: No module named")
    assert str(err.value).endswith("(scripts/setup.sh ur, from the checkout)")


# --------------------------------------------------------------------------- the force-torque sensor


def test_a_saturated_force_torque_sensor_is_one_line_and_stops_the_arm(ur):
    robot, log = ur({"external": {"from": 80, "wrench": [0.0, 0.0, -400.0, 0.0, 0.0, 0.0]}})
    wait_for(lambda: robot.fault is not None)
    assert one_line(robot.fault).startswith(f"UR at {IP}: force-torque sensor saturated: |Fz| = 400 N > 150 N")
    assert robot.stats().ft_faults == 1
    assert names(log)[-1] == "speedStop"
    with pytest.raises(RobotFault, match="saturated"):
        robot.state()
    robot.recover()  # a new session re-zeroes the sensor (the part still pushes: that is the new zero)
    assert robot.fault is None and np.all(np.isfinite(robot.state().tcp_pos))
    assert names(log).count("zeroFtSensor") == 2


def test_a_frozen_force_torque_stream_is_the_law_s_fault(ur):
    robot, log = ur({"ft_freeze_at": 80})
    wait_for(lambda: robot.fault is not None)
    assert one_line(robot.fault).startswith(f"UR at {IP}: force-torque sensor stale")
    rows = session_rows(fake_rtde.load_cycles(log), 1)
    replay(rows, robot.cfg, robot.hw, [], closed=False)  # the law saw no new sample from the freeze on
    assert np.all(np.isfinite(rows["args"][:, :6]))


def test_without_the_stale_check_a_constant_reading_is_fine(ur):
    """URSim's simulated sensor reads a constant: ``ft_stale_check: false`` lets it run."""
    robot, _ = ur({"ft_freeze_at": 20}, hardware={"ft_stale_check": False})
    time.sleep(0.5)
    assert robot.fault is None and robot.stats().cycles > 100


def test_a_dead_loop_process_is_a_fault_and_recover_starts_a_new_one(ur):
    robot, _ = ur()
    robot._process.kill()
    wait_for(lambda: robot.fault is not None)
    assert one_line(robot.fault) == f"UR at {IP}: the UR loop process died; recover starts it again"
    robot.recover()
    assert robot.fault is None and np.all(np.isfinite(robot.state().tcp_pos))


def test_recover_starts_a_new_loop_when_the_dead_one_still_looks_alive(ur):
    """On a loaded machine a killed loop process can still look alive (not yet reaped) when
    recover() looks: the request then meets a broken pipe, and recover reaps it and starts anew."""
    robot, _ = ur()
    robot._process.kill()
    wait_for(lambda: robot.fault is not None)
    robot._process.is_alive = lambda: True  # what recover() sees before the kernel has reaped it
    robot.recover()
    assert robot.fault is None and np.all(np.isfinite(robot.state().tcp_pos))
