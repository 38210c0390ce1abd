"""``robot-rl franka check|recover``: talk to a Franka arm from the command line.

* ``check`` connects, reads one state and prints the mode, the TCP pose, the joint
  positions and any active errors: the first thing to run on a new setup.
* ``recover`` runs libfranka's automatic error recovery, the one command that clears a
  reflex (for when no robot_rl process is running; a running backend recovers through
  ``Robot.recover()``, since the arm accepts one FCI connection at a time).

The address comes from ``--ip`` or from ``robot.hardware.ip`` of ``--config``. A robot
that refuses, does not answer within the connect timeout, or a wrong address is one line
on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Callable, Optional

import numpy as np

from robot_rl.cli import arm_check
from robot_rl.errors import DeviceError, install_extra
from robot_rl_drivers.robots.franka.loop import describe_fault
from robot_rl_drivers.robots.franka.state import pose_from_column_major

DEFAULT_TIMEOUT_S = 5.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arm_check.add_arguments(parser, ["check", "recover"], arm="arm", ip_help="the arm's FCI address",
                          default_timeout=DEFAULT_TIMEOUT_S, lib="pylibfranka")


def run(args: argparse.Namespace) -> int:
    ip, timeout = _address(args)
    for line in _in_child(args.lib, ip, args.action, timeout):
        print(line)
    return 0


def _in_child(lib_name: str, ip: str, action: str, timeout: float) -> list[str]:
    """Run ``action`` in a child process (:func:`.arm_check.in_child`) and return its output lines."""
    def deadline(stage: Optional[str]) -> tuple[float, str]:
        if stage is None:
            wait, late = timeout, f"did not answer within {timeout:g} s"
        elif stage == "recover":
            wait, late = max(timeout, 10.0), "did not finish error recovery"
        else:
            wait, late = timeout, "sent no state"
        return wait, f"the Franka at {ip} {late} (is it on, is FCI enabled in Desk, is the cable in the control box?)"

    return arm_check.in_child(_talk, (lib_name, ip, action), where=f"Franka at {ip}", describe=_describe, what=action,
                    deadline=deadline)


def _describe(err: BaseException) -> str:
    return describe_fault(err, None)


def _talk(lib_name: str, ip: str, action: str, stage: Callable[[str], None]) -> list[str]:
    try:
        lib = importlib.import_module(lib_name)
    except ImportError as err:
        raise DeviceError(f"robot-rl franka needs {lib_name}: {err} ({install_extra('real')})") from None
    try:
        robot = lib.Robot(ip, lib.RealtimeConfig.kIgnore)
    except Exception as err:  # noqa: BLE001
        raise DeviceError(f"cannot connect to the Franka at {ip}: {describe_fault(err, None)}") from None
    if action == "recover":
        stage("recover")
        try:
            robot.automatic_error_recovery()
        except Exception as err:  # noqa: BLE001
            raise DeviceError(f"Franka at {ip}: error recovery failed: {describe_fault(err, None)}") from None
        return [f"Franka at {ip}: recovered"]
    stage("read")
    state = robot.read_once()
    pos, quat = pose_from_column_major(state.O_T_EE)
    errors = str(getattr(state, "current_errors", "") or "none")
    return [f"Franka at {ip}: mode {getattr(state.robot_mode, 'name', state.robot_mode)}",
            f"  tcp position [m]      {np.array2string(pos, precision=4)}",
            f"  tcp quaternion (wxyz) {np.array2string(quat, precision=4)}",
            f"  joints [rad]          {np.array2string(np.asarray(state.q), precision=3)}",
            f"  active errors         {errors}"]


def _address(args: argparse.Namespace) -> tuple[str, float]:
    from robot_rl_drivers.robots.franka.settings import FrankaHardwareConfig

    return arm_check.address(args, FrankaHardwareConfig, "franka", DEFAULT_TIMEOUT_S)
