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
import threading
from typing import Any, Callable

import numpy as np

from robot_rl.errors import ConfigError, DeviceError
from robot_rl_drivers.robots.franka_loop import describe_fault
from robot_rl_drivers.robots.franka_state import pose_from_column_major


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["check", "recover"], help="what to do")
    parser.add_argument("--config", help="a config whose robot.hardware names the arm")
    parser.add_argument("--ip", help="the arm's FCI address (overrides the config)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds to wait for the arm (default 5)")
    parser.add_argument("--lib", default="pylibfranka", help=argparse.SUPPRESS)  # tests use a fake binding


def run(args: argparse.Namespace) -> int:
    ip, timeout = _address(args)
    try:
        lib = importlib.import_module(args.lib)
    except ImportError as err:
        raise DeviceError(f"robot-rl franka needs {args.lib}: {err} (pip install robot_rl[real])") from None
    robot = _with_timeout(lambda: lib.Robot(ip, lib.RealtimeConfig.kIgnore), timeout,
                          f"the Franka at {ip} did not answer within {timeout:g} s",
                          f"cannot connect to the Franka at {ip}")
    if args.action == "recover":
        _with_timeout(robot.automatic_error_recovery, max(timeout, 10.0),
                      f"the Franka at {ip} did not finish error recovery", f"Franka at {ip}: error recovery failed")
        print(f"Franka at {ip}: recovered")
        return 0
    state = _with_timeout(robot.read_once, timeout, f"the Franka at {ip} sent no state", f"Franka at {ip}")
    pos, quat = pose_from_column_major(state.O_T_EE)
    errors = str(getattr(state, "current_errors", "") or "none")
    print(f"Franka at {ip}: mode {getattr(state.robot_mode, 'name', state.robot_mode)}")
    print(f"  tcp position [m]      {np.array2string(pos, precision=4)}")
    print(f"  tcp quaternion (wxyz) {np.array2string(quat, precision=4)}")
    print(f"  joints [rad]          {np.array2string(np.asarray(state.q), precision=3)}")
    print(f"  active errors         {errors}")
    return 0


def _address(args: argparse.Namespace) -> tuple[str, float]:
    timeout = 5.0
    ip = args.ip
    if args.config:
        from robot_rl.config import load_config
        from robot_rl.config.hardware import FrankaHardwareConfig, robot_hardware

        cfg = load_config(args.config)
        hw = robot_hardware(cfg.robot, file=args.config)
        if not isinstance(hw, FrankaHardwareConfig):
            raise ConfigError(f"{args.config}: robot.backend is {cfg.robot.backend!r}, not 'franka'")
        ip = ip or hw.ip
        timeout = hw.connect_timeout_s
    if not ip:
        raise ConfigError("franka: give --ip, or --config with a robot.hardware.ip")
    from robot_rl.config.hardware import check_host

    try:
        check_host(ip)
    except ValueError as err:
        raise ConfigError(f"--ip: {err}") from None
    return ip, args.timeout if args.timeout is not None else timeout


def _with_timeout(call: Callable[[], Any], timeout: float, late: str, failed: str) -> Any:
    """Run a blocking libfranka call; a hang or an exception becomes one DeviceError line."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = call()
        except Exception as err:  # noqa: BLE001
            result["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise DeviceError(f"{late} (is it on, is FCI enabled in Desk, is the cable in the control box?)")
    if "error" in result:
        raise DeviceError(f"{failed}: {describe_fault(result['error'], None)}")
    return result["value"]
