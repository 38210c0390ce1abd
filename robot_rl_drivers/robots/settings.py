"""Settings shared by the arm backends' ``robot.hardware`` blocks: a real-time loop
process's scheduling (the Franka torque loop, the UR loop) and the check of an address.

Import-light like every settings module (no hardware library), so the config loader may
type ``robot.hardware`` through the registry (see :mod:`robot_rl_drivers.robots`).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Optional

from robot_rl.config.loader import param

_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*$")

@dataclass
class LoopProcessSettings:
    """A backend's real-time loop process (the Franka torque loop, the UR loop): its
    scheduling and the statistics it keeps."""

    rt_priority: int = param(80, min=0, max=99, doc="SCHED_FIFO priority of the loop process; 0 leaves it alone")
    cpu: Optional[int] = param(None, min=0, max=4095,
                               doc="pin the loop process to this core (isolate it with isolcpus)")
    late_factor: float = param(1.5, min=1.0, max=10.0, doc="a cycle is late when its period exceeds this many "
                               "control periods (1 ms on a Franka, 2 ms on a UR e-series)")
    stats_window: int = param(10000, min=100, max=1_000_000, doc="cycles kept for the period percentiles")
    first_state_timeout_s: float = param(5.0, min=0.1, max=60.0, doc="start fails if no state arrives in time")


def check_host(host: str) -> str:
    """``host`` if it is an IP address or a host name; ValueError otherwise."""
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    if not _HOSTNAME.match(host) or host.replace(".", "").isdigit():
        raise ValueError(f"ip {host!r} is not an IP address or host name")
    return host
