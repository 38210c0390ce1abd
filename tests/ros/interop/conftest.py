"""The interop tests leave no ``ros2`` daemon behind: the ``ros2`` CLI starts one per domain
(``ros2 topic``, ``ros2 node`` without ``--no-daemon``, ...), and each outlives the test that
started it. At the end of the session every daemon that serves a domain the tests used, and
did not serve it before, is stopped with ``ros2 daemon stop``."""

from __future__ import annotations

import pytest
from jazzy import DOMAINS, SOURCED, daemon_running, ros2, ros_env


@pytest.fixture(scope="session", autouse=True)
def stop_the_daemons_the_tests_started():
    yield
    if not SOURCED:
        return
    for domain, before in sorted(DOMAINS.items()):
        if not before and daemon_running(domain):
            ros2(["daemon", "stop"], {**ros_env(), "ROS_DOMAIN_ID": str(domain)}, timeout=30)
