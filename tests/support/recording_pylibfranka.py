"""fake_pylibfranka with every call that is not a torque cycle recorded, in order.

The Franka torque loop imports its library by name in its own process; given
``lib="recording_pylibfranka"`` it gets this module, which appends each call (the
connection, the collision thresholds, torque sessions, recovery, stop) to the JSON
file named by ``RECORDING_PYLIBFRANKA_LOG``. Used by backend_fingerprints.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import fake_pylibfranka as _fake
from fake_pylibfranka import *  # noqa: F403 - the same library surface as the fake

LOG_ENV = "RECORDING_PYLIBFRANKA_LOG"
_calls: list[list[Any]] = []


def _record(*call: Any) -> None:
    path = os.environ.get(LOG_ENV)
    _calls.append(list(call))
    if path:
        Path(f"{path}.tmp").write_text(json.dumps(_calls))
        os.replace(f"{path}.tmp", path)


class Robot(_fake.Robot):
    def __init__(self, ip: str, realtime_config: Any = _fake.RealtimeConfig.kEnforce) -> None:
        _record("Robot", ip, realtime_config.name)
        super().__init__(ip, realtime_config)

    def set_collision_behavior(self, lower_torque, upper_torque, lower_force, upper_force) -> None:
        _record("set_collision_behavior", *[list(map(float, v)) for v in
                                            (lower_torque, upper_torque, lower_force, upper_force)])
        super().set_collision_behavior(lower_torque, upper_torque, lower_force, upper_force)

    def start_torque_control(self) -> Any:
        _record("start_torque_control")
        return super().start_torque_control()

    def automatic_error_recovery(self) -> None:
        _record("automatic_error_recovery")
        super().automatic_error_recovery()

    def stop(self) -> None:
        _record("stop")
        super().stop()
