"""``robot-rl ur check``: talk to a UR e-series arm from the command line.

``check`` connects to the dashboard server and the RTDE receive interface (it takes no
control: nothing is uploaded to the UR, so it is safe while another program runs) and
prints the connection, the robot and safety modes, whether the UR is in remote control,
the TCP pose, the F/T reading and the joints: the first thing to run on a new setup.

The address comes from ``--ip`` or from ``robot.hardware.ip`` of ``--config``. A wrong
address, a UR that does not answer within the timeout, one not in remote control, or one
that cannot move now (a stop, powered off) is one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Optional

import numpy as np

from robot_rl.cli import arm_check
from robot_rl.errors import ConfigError, DeviceError, one_line
from robot_rl_drivers.robots.ur import faults as ur_faults
from robot_rl_drivers.robots.ur.loop import Rtde
from robot_rl_drivers.robots.ur.state import pose_from_ur, read

DEFAULT_TIMEOUT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    arm_check.add_arguments(parser, ["check"], arm="UR", ip_help="the UR's address", default_timeout=DEFAULT_TIMEOUT_S,
                          lib="ur_rtde")


def run(args: argparse.Namespace) -> int:
    ip, timeout = _address(args)
    lines, problem = _in_child(args.lib, ip, timeout)
    for line in lines:
        print(line)
    if problem:
        raise DeviceError(problem)
    return 0


def _in_child(lib_name: str, ip: str, timeout: float) -> tuple[list[str], str | None]:
    """Run the check in a child process (:func:`.arm_check.in_child`) and return its report and
    the problem found, if any."""
    def deadline(stage: Optional[str]) -> tuple[float, str]:
        if stage is None:
            return timeout, (f"the UR at {ip} did not answer within {timeout:g} s (is it on, is the address right, is "
                             "the cable in?)")
        return timeout, f"the UR at {ip} answered, then sent nothing while {stage} for {timeout:g} s"

    return arm_check.in_child(_check, (lib_name, ip, timeout), where=f"UR at {ip}", describe=one_line, what="check",
                    deadline=deadline)


def _check(lib_name: str, ip: str, timeout: float, stage: Callable[[str], None]) -> tuple[list[str], str | None]:
    try:
        rtde = Rtde(lib_name)
    except ImportError as err:
        raise DeviceError(str(err)) from None
    try:
        dashboard = rtde.dashboard.DashboardClient(ip)
        dashboard.connect(int(min(timeout, 10.0) * 1000))
    except Exception as err:  # noqa: BLE001
        raise DeviceError(ur_faults.unreachable(ip, err)) from None
    stage("reading the dashboard server")
    remote = bool(dashboard.isInRemoteControl())
    version = _text(dashboard, "polyscopeVersion")
    stage("connecting to RTDE")
    try:
        receive = rtde.receive.RTDEReceiveInterface(ip)
    except Exception as err:  # noqa: BLE001
        raise DeviceError(ur_faults.describe_connect_error(ip, err)) from None
    stage("reading RTDE")
    try:
        r = read(receive)
    finally:
        for close in (receive.disconnect, dashboard.disconnect):
            try:
                close()
            except Exception:  # noqa: BLE001 - closing never fails a check
                pass
    pos, quat = pose_from_ur(r.pose) if r.pose_ok else (np.full(3, np.nan), np.full(4, np.nan))
    lines = [f"UR at {ip}: connected (dashboard server, RTDE){f', {version}' if version else ''}",
             f"  remote control        {'yes' if remote else 'NO'}",
             f"  robot mode            {ur_faults.mode_name(ur_faults.ROBOT_MODES, r.robot_mode)}",
             f"  safety mode           {ur_faults.mode_name(ur_faults.SAFETY_MODES, r.safety_mode)}",
             f"  tcp position [m]      {np.array2string(pos, precision=4)}",
             f"  tcp quaternion (wxyz) {np.array2string(quat, precision=4)}",
             f"  tcp pose (UR, rotvec) {np.array2string(r.pose, precision=4)}",
             f"  F/T [N, Nm]           {np.array2string(r.wrench, precision=2)}",
             f"  joints [rad]          {np.array2string(r.q, precision=3)}"]
    problem = None
    if not remote:
        problem = ur_faults.not_in_remote_control(ip)
    elif not r.ok:
        problem = f"UR at {ip} sends unusable readings (non-finite or malformed values): restart its controller"
    elif not ur_faults.arm_can_move(r.safety_mode, r.robot_mode):
        line = ur_faults.describe_stop(ip, r.safety_mode, r.robot_mode, auto_unlock=False)
        problem = line.replace("then recover", "then check again")
    return lines, problem


def _text(dashboard: Any, method: str) -> str:
    try:
        return " ".join(str(getattr(dashboard, method)()).split())
    except Exception:  # noqa: BLE001 - an optional detail
        return ""


def _address(args: argparse.Namespace) -> tuple[str, float]:
    from robot_rl_drivers.robots.ur.settings import URHardwareConfig

    ip, timeout = arm_check.address(args, URHardwareConfig, "ur", DEFAULT_TIMEOUT_S)
    if args.timeout is not None and not (np.isfinite(args.timeout) and 0.1 <= args.timeout <= 600.0):
        raise ConfigError(f"--timeout must be between 0.1 and 600 s, got {args.timeout}")
    return ip, timeout
