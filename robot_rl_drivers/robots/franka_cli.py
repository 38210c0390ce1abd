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
import multiprocessing
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
    for line in _in_child(args.lib, ip, args.action, timeout):
        print(line)
    return 0


def _in_child(lib_name: str, ip: str, action: str, timeout: float) -> list[str]:
    """Run ``action`` in a child process and return its output lines.

    libfranka's blocking calls may hold the GIL while they wait for an arm that does not
    answer, so a watchdog thread in this process would never run; a child process can
    always be killed. The child reports each stage it reaches, so a hang is named by stage.
    It is spawned, not forked: a fork of a process that runs BLAS or OpenMP worker threads
    (an embedding program, a test run after training) can deadlock in the child's first
    numpy call.
    """
    ctx = multiprocessing.get_context("spawn")
    reader, writer = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child_main, args=(lib_name, ip, action, writer), daemon=True)
    child.start()
    writer.close()
    stage, late = "connect", f"the Franka at {ip} did not answer within {timeout:g} s"
    try:
        while True:
            wait = max(timeout, 10.0) if stage == "recover" else timeout
            if not reader.poll(wait):
                raise DeviceError(f"{late} (is it on, is FCI enabled in Desk, is the cable in the control box?)")
            try:
                kind, payload = reader.recv()
            except EOFError:
                raise DeviceError(f"Franka at {ip}: the {action} process ended without an answer "
                                  f"(exit code {child.exitcode})") from None
            if kind == "stage":
                stage = payload
                late = (f"the Franka at {ip} did not finish error recovery" if stage == "recover"
                        else f"the Franka at {ip} sent no state")
            elif kind == "error":
                raise DeviceError(payload)
            else:
                return payload
    finally:
        if child.is_alive():
            child.kill()
        child.join(1.0)
        reader.close()


def _child_main(lib_name: str, ip: str, action: str, out: Any) -> None:
    try:
        out.send(("done", _talk(lib_name, ip, action, lambda stage: out.send(("stage", stage)))))
    except DeviceError as err:
        out.send(("error", str(err)))
    except Exception as err:  # noqa: BLE001 - anything the binding raises becomes one line
        out.send(("error", f"Franka at {ip}: {describe_fault(err, None)}"))
    finally:
        out.close()


def _talk(lib_name: str, ip: str, action: str, stage: Callable[[str], None]) -> list[str]:
    try:
        lib = importlib.import_module(lib_name)
    except ImportError as err:
        raise DeviceError(f"robot-rl franka needs {lib_name}: {err} (pip install robot_rl[real])") from None
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
    timeout = 5.0
    ip = args.ip
    if args.config:
        from robot_rl.config.hardware import FrankaHardwareConfig, robot_hardware
        from robot_rl.paths import resolve_config
        from robot_rl.tasks import load_config

        cfg = load_config(resolve_config(args.config))
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
