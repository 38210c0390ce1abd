"""For the interop tests against a real ROS 2: is one sourced, and the environments of both sides.

Every interop test runs in its own ``ROS_DOMAIN_ID``, with ``RMW_IMPLEMENTATION=rmw_cyclonedds_cpp``
and ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` on both sides: the setting in which ROS 2
peers and the DDS backend must find each other at any time. DDS-backend processes get an
environment without ROS's ``LD_LIBRARY_PATH``, so the ``cyclonedds`` wheel loads its own
library, not the one ROS 2 was built with.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from domains import private_domain

ROOT = Path(__file__).resolve().parents[2]
SOURCED = bool(os.environ.get("ROS_DISTRO")) and shutil.which("ros2") is not None
needs_ros2 = pytest.mark.skipif(not SOURCED, reason="needs a sourced ROS 2 (ROS_DISTRO set and `ros2` on PATH)")


def ament_has(*packages: str, prefixes: str | None = None) -> bool:
    """Whether every one of ``packages`` is installed in the sourced ROS 2: listed in the ament index of a
    prefix of ``prefixes`` (``AMENT_PREFIX_PATH`` when None), the index ``ros2 pkg list`` reads."""
    roots = [Path(p) for p in (os.environ.get("AMENT_PREFIX_PATH", "") if prefixes is None else prefixes)
             .split(os.pathsep) if p]
    return all(any((root / "share/ament_index/resource_index/packages" / package).is_file() for root in roots)
               for package in packages)


#: rosbag2 is no part of every ROS 2 (ros_core and a from-source core build lack it): without it the
#: ``ros2`` CLI has no ``bag`` verb, and the bag tests skip instead of failing on ``invalid choice: 'bag'``
needs_rosbag2 = pytest.mark.skipif(not (SOURCED and ament_has("ros2bag", "rosbag2_storage_mcap")),
                                   reason="needs rosbag2 in the sourced ROS 2 (ros2bag, rosbag2_storage_mcap)")


#: Each domain ros_env handed out, and whether a ``ros2`` daemon already served it then: the
#: ``ros2`` CLI starts a daemon per domain, which outlives the tests unless they stop it
#: (tests/ros/interop/conftest.py stops the ones the tests started).
DOMAINS: dict[int, bool] = {}
DAEMON_BASE_PORT = 11511  # ros2cli's daemon listens on localhost at this port + ROS_DOMAIN_ID


def daemon_running(domain: int) -> bool:
    """Whether a ``ros2`` daemon answers for ``domain`` (its XML-RPC port takes a connection)."""
    import socket

    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", DAEMON_BASE_PORT + domain)) == 0


def ros_env() -> dict[str, str]:
    """The environment of a ROS 2 process (``ros2`` CLI, rclpy) in a new private domain."""
    env = dict(os.environ)
    domain = private_domain(101, 230)
    if domain not in DOMAINS:
        DOMAINS[domain] = daemon_running(domain)
    env.update(ROS_DOMAIN_ID=str(domain), RMW_IMPLEMENTATION="rmw_cyclonedds_cpp",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1", MUJOCO_GL="egl")
    env.pop("ROBOT_RL_DDS_LOCALHOST", None)
    return env


def dds_env(ros: dict[str, str]) -> dict[str, str]:
    """The same domain for robot_rl processes on the DDS backend (the wheel's own Cyclone library)."""
    env = dict(ros, ROBOT_RL_ROS_BACKEND="dds")
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("CYCLONEDDS_HOME", None)
    return env


def ros2(args: list[str], env: dict[str, str], timeout: float = 60.0, cwd: Path | None = None
         ) -> subprocess.CompletedProcess:
    """Run one ``ros2`` command to its end; its output, whatever the exit status."""
    return subprocess.run(["ros2", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def until(check, timeout: float, period: float = 1.0):
    """Call ``check()`` until it returns something true (returned), or fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(period)
    raise AssertionError(f"not within {timeout:.0f} s; last: {last!r}")
