"""What a UR's robot and safety modes mean, as one line that says what to do.

RTDE reports ``robot_mode`` and ``safety_mode`` as integers (Universal Robots' RTDE
guide; ur_rtde's ``getRobotMode()`` and ``getSafetyMode()``). The arm moves under
robot_rl's control only while the robot mode is RUNNING and the safety mode NORMAL or
REDUCED; anything else stops a control session, and the person at the robot gets a line
naming the UR, the mode and the remedy. Only a protective stop can be cleared from
robot_rl (the dashboard server's ``unlock protective stop``, refused within 5 s of the
stop); every other stop needs a person at the teach pendant.
"""

from __future__ import annotations

from robot_rl.errors import one_line

ROBOT_MODES: dict[int, str] = {
    -1: "NO_CONTROLLER", 0: "DISCONNECTED", 1: "CONFIRM_SAFETY", 2: "BOOTING", 3: "POWER_OFF", 4: "POWER_ON",
    5: "IDLE", 6: "BACKDRIVE", 7: "RUNNING", 8: "UPDATING_FIRMWARE",
}
SAFETY_MODES: dict[int, str] = {
    1: "NORMAL", 2: "REDUCED", 3: "PROTECTIVE_STOP", 4: "RECOVERY", 5: "SAFEGUARD_STOP", 6: "SYSTEM_EMERGENCY_STOP",
    7: "ROBOT_EMERGENCY_STOP", 8: "VIOLATION", 9: "FAULT", 10: "VALIDATE_JOINT_ID", 11: "UNDEFINED_SAFETY_MODE",
    12: "AUTOMATIC_MODE_SAFEGUARD_STOP", 13: "SYSTEM_THREE_POSITION_ENABLING_STOP",
}
RUNNING = 7
NORMAL, REDUCED, PROTECTIVE_STOP = 1, 2, 3
MOVING_SAFETY_MODES = (NORMAL, REDUCED)

_POWER_UP = "power it on and release the brakes on the teach pendant (the button at the bottom left), then recover"
# safety mode -> (what happened, what the person does)
_SAFETY_REMEDIES: dict[int, tuple[str, str]] = {
    4: ("is in recovery mode (a joint is beyond a safety limit)",
        "move the arm back within the limits on the teach pendant, then recover"),
    5: ("is in safeguard stop (a safeguard input opened: a door, a light curtain)", "close it, then recover"),
    6: ("is in emergency stop (the cell's emergency stop input)",
        f"release the emergency stop, then {_POWER_UP}"),
    7: ("is in emergency stop (the teach pendant's button)", f"release the emergency stop, then {_POWER_UP}"),
    8: ("reports a safety violation", "read the log on the teach pendant and restart the safety system, then recover"),
    9: ("reports a safety fault", "read the log on the teach pendant and restart the safety system, then recover"),
    12: ("is in safeguard stop (automatic mode safeguard input)", "close the safeguard, then recover"),
    13: ("stopped: the three-position enabling device was released", "hold it in the middle position, then recover"),
}
_ROBOT_REMEDIES: dict[int, str] = {
    -1: "start the UR's controller", 0: "start the UR's controller",
    1: "confirm the safety configuration on the teach pendant, then recover",
    2: "wait until the UR has booted, then recover", 3: _POWER_UP, 4: _POWER_UP, 5: _POWER_UP,
    6: "leave backdrive on the teach pendant, release the brakes, then recover",
    8: "wait until the firmware update has finished, then recover",
}


def mode_name(table: dict[int, str], code: object) -> str:
    """``NAME (code)``; any value, even one the UR would never send, names itself."""
    try:
        number = int(code)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return f"unreadable ({code!r:.40})"
    return f"{table.get(number, 'UNKNOWN')} ({number})"


def arm_can_move(safety_mode: int, robot_mode: int) -> bool:
    """Whether a control session may run: robot mode RUNNING, safety mode NORMAL or REDUCED."""
    return robot_mode == RUNNING and safety_mode in MOVING_SAFETY_MODES


def describe_stop(ip: str, safety_mode: int, robot_mode: int, *, auto_unlock: bool = True,
                  unlock_delay_s: float = 5.0) -> str:
    """One line: why the UR at ``ip`` cannot move now, and what to do about it."""
    if safety_mode == PROTECTIVE_STOP:
        if auto_unlock:
            return (f"UR at {ip} is in protective stop: clear the cause (a collision, a limit), then robot_rl "
                    f"unlocks it {unlock_delay_s:g} s after the stop")
        return (f"UR at {ip} is in protective stop: clear the cause (a collision, a limit), unlock it on the "
                "teach pendant, then recover (robot.hardware.recovery.auto_unlock is false)")
    if safety_mode not in MOVING_SAFETY_MODES:
        what, remedy = _SAFETY_REMEDIES.get(int(safety_mode), (
            f"is in safety mode {mode_name(SAFETY_MODES, safety_mode)}", "check the teach pendant, then recover"))
        return f"UR at {ip} {what}: {remedy}"
    if robot_mode != RUNNING:
        remedy = _ROBOT_REMEDIES.get(int(robot_mode), "check the teach pendant, then recover")
        return f"UR at {ip} is not running (robot mode {mode_name(ROBOT_MODES, robot_mode)}): {remedy}"
    return f"UR at {ip} is running normally"


def needs_person(safety_mode: int, robot_mode: int, auto_unlock: bool) -> bool:
    """Whether only a person at the robot can make it move again (everything but an unlockable protective stop)."""
    if safety_mode == PROTECTIVE_STOP:
        return not auto_unlock
    return not arm_can_move(safety_mode, robot_mode)


def not_in_remote_control(ip: str) -> str:
    return (f"UR at {ip} is not in remote control: on the teach pendant, switch to Remote Control (the icon at "
            "the top right), then start again")


def unreachable(ip: str, err: BaseException | str) -> str:
    why = err if isinstance(err, str) else one_line(err)
    return (f"cannot reach the UR at {ip} ({why}): check robot.hardware.ip, the network cable, and that this PC "
            "has an address in the UR's subnet")


def lost_connection(ip: str, why: str) -> str:
    return f"UR at {ip}: lost the connection ({why}): check the network cable and that the UR is on, then recover"


def describe_connect_error(ip: str, err: BaseException) -> str:
    """One line for what ur_rtde raised while connecting (it raises RuntimeError for every case)."""
    text = str(err)
    if "remote control" in text.lower():
        return not_in_remote_control(ip)
    if isinstance(err, OSError) or any(k in text for k in ("connect", "Timeout", "timed out", "resolve")):
        return unreachable(ip, err)
    return f"UR at {ip}: {one_line(err)}"
