"""The Robotiq 2F gripper over the URCap socket protocol, against a fake URCap on localhost
(tests/support/fake_robotiq.py), and the common Gripper interface both grippers implement."""

from __future__ import annotations

import socket

import pytest
from fake_robotiq import FakeRobotiq
from polling import wait_for

from robot_rl.config.loader import build
from robot_rl.errors import DeviceError
from robot_rl_drivers.robots.franka.gripper import FrankaGripper
from robot_rl_drivers.robots.gripper import Gripper
from robot_rl_drivers.robots.ur.robotiq import RobotiqGripper
from robot_rl_drivers.robots.ur.settings import RobotiqSettings


@pytest.fixture
def urcap():
    servers = []

    def make(**kw) -> FakeRobotiq:
        servers.append(FakeRobotiq(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


@pytest.fixture
def gripper(urcap):
    made = []

    def make(server: FakeRobotiq, **settings) -> RobotiqGripper:
        cfg = build(RobotiqSettings, {"enabled": True, "port": server.port, "state_hz": 50.0, **settings},
                    file="t.yaml", where="robot.hardware.gripper")
        made.append(RobotiqGripper("127.0.0.1", cfg))
        return made[-1]

    yield make
    for g in made:
        g.close()


def test_both_grippers_implement_the_common_interface():
    assert issubclass(RobotiqGripper, Gripper) and issubclass(FrankaGripper, Gripper)
    with pytest.raises(TypeError):
        Gripper()  # abstract


def test_start_activates_the_gripper_and_reads_it_open(urcap, gripper):
    server = urcap(activation_s=0.1)
    g = gripper(server)
    assert server.requests[:4] == ["GET STA", "SET ACT 0", "SET ACT 1", "GET STA"]
    assert server.regs["STA"] == 3 and g.fraction == 1.0


def test_an_active_gripper_is_not_activated_again(urcap, gripper):
    server = urcap(active=True)
    gripper(server)
    assert not any(r.startswith("SET ACT") for r in server.requests)


def test_binary_mode_closes_below_the_threshold_and_stops_on_an_object(urcap, gripper):
    server = urcap(object_at=180)
    g = gripper(server, force=60, speed=200)
    g.command(0.3)
    wait_for(lambda: server.regs["OBJ"] == 2)  # stopped on the part
    wait_for(lambda: abs(g.fraction - (255 - 180) / 255) < 1e-9)
    assert "SET POS 255 SPE 200 FOR 60 GTO 1" in server.requests
    g.command(0.2)  # still "closed": nothing sent
    g.command(0.8)  # open fully
    wait_for(lambda: g.fraction == 1.0)
    sets = [r for r in server.requests if r.startswith("SET POS")]
    assert sets == ["SET POS 255 SPE 200 FOR 60 GTO 1", "SET POS 0 SPE 200 FOR 60 GTO 1"]
    assert g.commands == 2 and g.failures == 0


def test_continuous_mode_maps_fractions_between_the_calibrated_ends(urcap, gripper):
    server = urcap()
    g = gripper(server, mode="continuous", open_position=3, closed_position=229, deadband=0.05)
    g.command(0.5)
    wait_for(lambda: server.regs["PRE"] == 116)  # round(229 - 0.5 * 226)
    g.command(0.52)  # within the deadband
    g.command(0.0)
    wait_for(lambda: server.regs["PRE"] == 229)
    wait_for(lambda: g.fraction == 0.0)
    assert [r.split()[2] for r in server.requests if r.startswith("SET POS")] == ["116", "229"]


@pytest.mark.parametrize("behaviour, message", [
    ("silent", "Robotiq gripper at 127.0.0.1:{port}: TimeoutError: timed out (check the gripper in the Robotiq URCap"),
    ("garbage", "Robotiq gripper at 127.0.0.1:{port}: 'GET STA' was answered '?!' (check the gripper"),
    ("never_active", "Robotiq gripper at 127.0.0.1:{port}: did not activate within 0.5 s (STA 1)"),
])
def test_a_urcap_that_does_not_answer_properly_is_one_line(urcap, behaviour, message):
    server = urcap(behaviour=behaviour)
    cfg = RobotiqSettings(enabled=True, port=server.port, socket_timeout_s=0.3, activation_timeout_s=0.5)
    with pytest.raises(DeviceError) as err:
        RobotiqGripper("127.0.0.1", cfg)
    assert str(err.value).startswith(message.format(port=server.port)) and "\n" not in str(err.value)


def test_no_urcap_listening_is_one_line():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DeviceError) as err:
        RobotiqGripper("127.0.0.1", RobotiqSettings(enabled=True, port=port, socket_timeout_s=0.3))
    assert str(err.value).startswith(f"Robotiq gripper at 127.0.0.1:{port} does not answer (ConnectionRefusedError")
    assert str(err.value).endswith("is the Robotiq URCap installed on the UR and the gripper on the tool connector?")


def test_a_urcap_that_goes_silent_later_is_counted_not_raised(urcap, gripper):
    server = urcap()
    g = gripper(server, socket_timeout_s=0.2)
    server.behaviour = "silent"
    g.command(0.0)
    wait_for(lambda: g.failures == 1)
    assert g.read_failures >= 0 and g.fraction == 1.0  # the last position read stays
    server.behaviour = "ok"
    g.command(1.0)
    wait_for(lambda: g.commands == 1)  # answers line up again after the timeout
