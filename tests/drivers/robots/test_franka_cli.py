"""``robot-rl franka check|recover``: one line and a non-zero exit on every connection problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from robot_rl.cli import main

HERE = Path(__file__).resolve().parents[2] / "support"  # fake_pylibfranka.py


# The fake arm answers at once; a generous wait keeps a loaded machine (a slow child
# process start) from looking like a silent robot.
ANSWERS = ["--timeout", "60"]


@pytest.fixture
def fake(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    import fake_pylibfranka as fakelib

    def use(scenario: dict) -> list[str]:
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario))
        monkeypatch.setenv(fakelib.SCENARIO_ENV, str(path))
        return ["--lib", "fake_pylibfranka"]

    return use


def test_check_prints_the_state(fake, capsys):
    assert main(["franka", "check", "--ip", "172.16.0.2", *ANSWERS, *fake({})]) == 0
    out = capsys.readouterr().out
    assert "Franka at 172.16.0.2: mode" in out and "tcp position" in out and "active errors         none" in out


def test_recover_is_one_command(fake, capsys):
    assert main(["franka", "recover", "--ip", "172.16.0.2", *ANSWERS, *fake({})]) == 0
    assert "recovered" in capsys.readouterr().out


def test_a_failed_recovery_is_one_line(fake, capsys):
    assert main(["franka", "recover", "--ip", "172.16.0.2", *ANSWERS, *fake({"recover": "fail"})]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("robot-rl: Franka at 172.16.0.2: error recovery failed: CommandException") and "\n" not in err


def test_a_robot_that_does_not_answer_is_one_line(fake, capsys):
    assert main(["franka", "check", "--ip", "172.16.0.2", "--timeout", "0.3", *fake({"connect": "hang"})]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("robot-rl: the Franka at 172.16.0.2 did not answer within 0.3 s") and "\n" not in err


def test_the_ip_comes_from_the_config(fake, tmp_path, capsys):
    cfg = tmp_path / "rig.yaml"
    cfg.write_text(yaml.safe_dump({"robot": {"backend": "franka", "hardware": {"ip": "robot.lab"}},
                                   "env": {"obs_mode": "pixels"}}))
    assert main(["franka", "check", "--config", str(cfg), *ANSWERS, *fake({})]) == 0
    assert "Franka at robot.lab" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--ip", "1.2.3"], "robot-rl: --ip: ip '1.2.3' is not an IP address or host name"),
    ([], "robot-rl: franka: give --ip, or --config with a robot.hardware.ip"),
])
def test_bad_addresses_are_one_line(argv, message, capsys):
    assert main(["franka", "check", *argv]) == 2
    assert capsys.readouterr().err.strip() == message


def test_real_pylibfranka_refused_exits_non_zero_with_one_line():
    pytest.importorskip("pylibfranka")
    out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "franka", "check", "--ip", "127.0.0.1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("robot-rl: cannot connect to the Franka at 127.0.0.1: "
                                                   "NetworkException")


def test_real_pylibfranka_against_a_silent_arm_times_out_with_one_line():
    """An address that accepts the connection but never speaks FCI: libfranka blocks (holding
    the GIL), and the check still ends at the timeout with one line."""
    pytest.importorskip("pylibfranka")
    import socket

    with socket.socket() as silent:
        try:
            silent.bind(("127.0.0.1", 1337))  # libfranka's command port
        except OSError:
            pytest.skip("port 1337 is in use on this machine")
        silent.listen(4)
        out = subprocess.run([sys.executable, "-m", "robot_rl.cli", "franka", "check", "--ip", "127.0.0.1",
                              "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines == ["robot-rl: the Franka at 127.0.0.1 did not answer within 2 s (is it on, is FCI enabled "
                     "in Desk, is the cable in the control box?)"]
