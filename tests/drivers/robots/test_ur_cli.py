"""``robot-rl ur check``: the UR's connection, modes and state; one line and a non-zero exit on every problem."""

from __future__ import annotations

import importlib.util
import json

import fake_rtde
import pytest
import yaml
from ur_rig import SUPPORT

from robot_rl.cli import main

IP = "10.0.0.2"
# The fake UR answers at once; a generous wait keeps a loaded machine (a slow child process
# start) from looking like a silent robot.
ANSWERS = ["--timeout", "60"]


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(SUPPORT))  # the spawned check process imports the fake by name

    def use(scenario: dict) -> list[str]:
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps({"log": str(tmp_path / "ur"), **scenario}))
        monkeypatch.setenv(fake_rtde.SCENARIO_ENV, str(path))
        return ["--lib", "fake_rtde"]

    return use


def test_check_reports_connection_modes_and_state_and_takes_no_control(fake, tmp_path, capsys):
    assert main(["ur", "check", "--ip", IP, *ANSWERS, *fake({})]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"UR at {IP}: connected (dashboard server, RTDE), URSoftware 5.15")
    for line in ("remote control        yes", "robot mode            RUNNING (7)", "safety mode           NORMAL (1)",
                 "tcp position [m]      [ 0.4 -0.1  0.3]", "F/T [N, Nm]", "joints [rad]"):
        assert line in out, line
    calls = [c[0] for c in fake_rtde.load_calls(tmp_path / "ur")]
    assert "RTDEControlInterface" not in calls, "check must not upload the control script"


@pytest.mark.parametrize("scenario, message", [
    ({"reachable": False}, f"robot-rl: cannot reach the UR at {IP} (RuntimeError: Timeout connecting to UR dashboard "
                           "server.): check robot.hardware.ip"),
    ({"remote": False}, f"robot-rl: UR at {IP} is not in remote control: on the teach pendant, switch to Remote "
                        "Control"),
    ({"safety_mode": 3}, f"robot-rl: UR at {IP} is in protective stop: clear the cause (a collision, a limit), unlock "
                         "it on the teach pendant, then check again"),
    ({"robot_mode": 3}, f"robot-rl: UR at {IP} is not running (robot mode POWER_OFF (3)): power it on"),
    ({"corrupt": [{"from": 0, "to": 1, "field": "pose", "value": "nan"}]},
     f"robot-rl: UR at {IP} sends unusable readings"),
])
def test_every_problem_is_one_line_and_a_non_zero_exit(fake, capsys, scenario, message):
    assert main(["ur", "check", "--ip", IP, *ANSWERS, *fake(scenario)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err, err


def test_a_ur_that_does_not_answer_is_one_line(fake, capsys):
    assert main(["ur", "check", "--ip", IP, "--timeout", "0.5", *fake({"connect": "hang"})]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"robot-rl: the UR at {IP} did not answer within 0.5 s") and "\n" not in err


@pytest.mark.parametrize("args, message", [
    (["--ip", "10.0.0.300"], "robot-rl: --ip: ip '10.0.0.300' is not an IP address or host name"),
    ([], "robot-rl: ur: give --ip, or --config with a robot.hardware.ip"),
    (["--ip", IP, "--timeout", "nan"], "robot-rl: --timeout must be between 0.1 and 600 s, got nan"),
    (["--ip", IP, "--timeout", "-1"], "robot-rl: --timeout must be between 0.1 and 600 s, got -1.0"),
])
def test_bad_arguments_are_one_line(capsys, args, message):
    assert main(["ur", "check", *args]) == 2
    assert capsys.readouterr().err.strip() == message


def test_the_address_comes_from_the_config(fake, tmp_path, capsys):
    config = tmp_path / "ur.yaml"
    config.write_text(yaml.safe_dump({
        "task": {"name": "PickCube"}, "env": {"obs_mode": "pixels"},
        "robot": {"backend": "ur", "reset_pos": [0.4, -0.1, 0.3],
                  "workspace": {"pos_low": [0.25, -0.25, 0.15], "pos_high": [0.55, 0.05, 0.45]},
                  "hardware": {"ip": "10.0.0.7", "connect_timeout_s": 60}}}))
    assert main(["ur", "check", "--config", str(config), *fake({})]) == 0
    assert "UR at 10.0.0.7: connected" in capsys.readouterr().out


def test_a_config_for_another_arm_is_refused(tmp_path, capsys):
    config = tmp_path / "franka.yaml"
    config.write_text(yaml.safe_dump({"task": {"name": "PickCube"}, "env": {"obs_mode": "pixels"},
                                      "robot": {"backend": "franka", "reset_pos": [0.5, 0.0, 0.25],
                                                "hardware": {"ip": "172.16.0.2"}}}))
    assert main(["ur", "check", "--config", str(config)]) == 2
    assert capsys.readouterr().err.strip() == f"robot-rl: {config}: robot.backend is 'franka', not 'ur'"


def test_a_missing_ur_rtde_names_the_extra(capsys):
    if importlib.util.find_spec("rtde_control") is not None:
        pytest.skip("ur_rtde is installed here")
    assert main(["ur", "check", "--ip", IP, *ANSWERS]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("robot-rl: the UR backend needs ur_rtde: No module named") and err.endswith(
        "(scripts/setup.sh ur, from the checkout)")
